#!/usr/bin/env bash
# Makes Podman run containers on this kind of machine (no Docker engine; the facts are in
# docs/deployment.md, "What is proven where"): installs Debian's Podman, runc, the dnsname network
# plugin (service names on a compose network), podman-compose and debootstrap when missing, and
# writes the two settings Podman's defaults get wrong here, each only when not set already:
#   - runtime runc: crun refuses cgroups in hybrid mode ("cgroups in hybrid mode not supported");
#   - default ulimits the machine may set: without CAP_SYS_RESOURCE, Podman's own defaults fail
#     with "setrlimit ... Operation not permitted".
# Idempotent; prints the Podman version last.
set -euo pipefail

packages=""
command -v podman >/dev/null 2>&1 || packages="$packages podman"
command -v runc >/dev/null 2>&1 || packages="$packages runc"
[ -x /usr/lib/cni/dnsname ] || packages="$packages golang-github-containernetworking-plugin-dnsname dnsmasq-base"
command -v podman-compose >/dev/null 2>&1 || packages="$packages podman-compose"
command -v debootstrap >/dev/null 2>&1 || packages="$packages debootstrap"
# `init: true` in docker-compose.yml runs catatonit as the container's first process.
[ -x /usr/libexec/podman/catatonit ] || packages="$packages catatonit"
command -v slirp4netns >/dev/null 2>&1 || packages="$packages slirp4netns uidmap fuse-overlayfs"
if [ -n "$packages" ]; then
  echo "Installing Debian's$packages" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086 # no word when already root; one word per package
  $SUDO apt-get update -qq >&2
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $packages >/dev/null
fi

conf=/etc/containers/containers.conf.d/keel.conf
if [ ! -f "$conf" ]; then
  # The highest nofile and nproc this machine lets a process without CAP_SYS_RESOURCE keep.
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] && nofile=1048576
  [ "$nproc" = unlimited ] && nproc=32768
  [ "$nofile" -le 20000 ] || nofile=20000
  [ "$nproc" -le 32768 ] || nproc=32768
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO mkdir -p "$(dirname "$conf")"
  printf '%s\n' '# Written by scripts/compose/podman.sh.' \
    '[containers]' "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]" \
    '[engine]' 'runtime = "runc"' | $SUDO tee "$conf" >/dev/null
  echo "Wrote $conf" >&2
fi
podman --version
