#!/usr/bin/env bash
# Prints the path of a real OpenTelemetry Collector (the OTLP receiver; the file and debug exporters),
# built once from the Go module proxy out of scripts/telemetry/collector/ and cached by version. The
# build runs at the lowest priority and says how long it took: cold (empty Go caches) about 10 minutes
# on two shared cores and 0.8 GB of memory; 1 to 2 minutes with the modules already downloaded.
#   KEEL_CACHE_DIR  ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
set -euo pipefail

# The collector's core modules release together (v0.165.0 with the v1.71.0 ones); see collector/go.mod.
version=0.165.0
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/collector"
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
# The sources' hash is part of the name: editing main.go or go.mod builds a new collector.
digest=$(cat "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/otelcol-$version-$digest"

if [ -x "$target/bin/otelcol" ]; then
  echo "$target/bin/otelcol"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "Building the OpenTelemetry Collector $version needs Go (https://go.dev/dl/); none is on PATH." >&2
  exit 1
fi

mkdir -p "$cache_root"
# Test files starting at once build it once: the others wait here, then find it built.
exec 9>"$cache_root/.otelcol-$version.lock"
flock 9
if [ -x "$target/bin/otelcol" ]; then
  echo "$target/bin/otelcol"
  exit 0
fi
# Built beside the target and renamed into place, so an interrupted build never looks complete.
work=$(mktemp -d "$cache_root/.otelcol-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
echo "Building the OpenTelemetry Collector $version from the Go module proxy (once; cached in $target)..." >&2
cp "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" "$work/"
(cd "$work" && nice -n 19 go build -trimpath -o "$work/bin/otelcol" .) >&2
"$work/bin/otelcol" --version >/dev/null
rm -f "$work/main.go" "$work/go.mod" "$work/go.sum"
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "Built the OpenTelemetry Collector $version in $(( $(date +%s) - started )) s" >&2
echo "$target/bin/otelcol"
