#!/usr/bin/env bash
# Installs podman-compose (pinned) from PyPI into its own Python virtual environment under
# ~/.cache/keel/podman-compose-<version> once (KEEL_CACHE_DIR moves it), behind a lock, checks the
# installed version on every use, and prints the path of its `podman-compose`.
# Not Debian's 1.0.3: it leaves `${VAR:-}` (an empty default, which docker-compose.yml uses)
# unsubstituted. Run `up` with --no-deps against Podman 4.3: its start of a container with
# `--requires` fails on a dependency's own dependency ("not found in input list"); the stack's
# one-shot jobs and the worker wait and retry instead (restart policies).
set -euo pipefail

version=1.6.0
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
target="$cache_root/podman-compose-$version"

installed() {
  [ -f "$target/INSTALLED" ] &&
    [ "$("$target/bin/podman-compose" --version 2>/dev/null | sed -n 's/^podman-compose version //p')" = "$version" ]
}

mkdir -p "$cache_root"
exec 9>"$cache_root/.podman-compose-$version.lock"
flock 9
if ! installed; then
  echo "Installing podman-compose $version from PyPI into $target (once)..." >&2
  rm -rf "$target"
  python3 -m venv "$target"
  "$target/bin/pip" install --quiet --disable-pip-version-check "podman-compose==$version" >&2
  touch "$target/INSTALLED"
  installed || { echo "podman-compose $version in $target does not say its version" >&2; exit 1; }
fi
echo "$target/bin/podman-compose"
