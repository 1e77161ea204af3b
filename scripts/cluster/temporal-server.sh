#!/usr/bin/env bash
# Prints the directory holding the real Temporal server, built once from the Go module proxy and
# cached by version: bin/temporal-server, bin/temporal-sql-tool, the server's own config template
# (config/docker.yaml, the one the temporalio/server image renders from its environment) and the
# PostgreSQL schema (schema/postgresql/v12). Builds only when the cache lacks any of them; a cold
# build takes about 10 minutes and 2.6 GB of memory, a warm Go cache seconds.
#   KEEL_TEMPORAL_SERVER_VERSION  (1.32.1; 1.32.2 and 1.31.5 need Go >= 1.26.10)
#   KEEL_CACHE_DIR                ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
set -euo pipefail

version=${KEEL_TEMPORAL_SERVER_VERSION:-1.32.1}
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
target="$cache_root/temporal-server-$version"

complete() {
  [ -x "$1/bin/temporal-server" ] && [ -x "$1/bin/temporal-sql-tool" ] &&
    [ -f "$1/config/docker.yaml" ] && [ -d "$1/schema/postgresql/v12/temporal/versioned" ]
}

if complete "$target"; then
  echo "$target"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "Building the Temporal server $version needs Go (https://go.dev/dl/); none is on PATH." >&2
  exit 1
fi

mkdir -p "$cache_root"
# Built beside the target and renamed into place, so an interrupted build never looks complete.
work=$(mktemp -d "$cache_root/.temporal-server-$version.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
started=$(date +%s)
echo "Building the Temporal server $version and temporal-sql-tool from the Go module proxy (once; cached in $target)..." >&2
GOBIN="$work/bin" go install \
  "go.temporal.io/server/cmd/server@v$version" \
  "go.temporal.io/server/cmd/tools/sql@v$version" >&2
mv "$work/bin/server" "$work/bin/temporal-server"
mv "$work/bin/sql" "$work/bin/temporal-sql-tool"

module="$(go env GOMODCACHE)/go.temporal.io/server@v$version"
mkdir -p "$work/config" "$work/schema"
cp "$module/config/docker.yaml" "$work/config/docker.yaml"
cp -R "$module/schema/postgresql" "$work/schema/postgresql"
# The module cache is read-only; the copies need not be.
chmod -R u+w "$work"
complete "$work" || { echo "The build of the Temporal server $version is incomplete in $work" >&2; exit 1; }

rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "Built the Temporal server $version in $(( $(date +%s) - started )) s" >&2
echo "$target"
