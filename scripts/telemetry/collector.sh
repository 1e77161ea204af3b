#!/usr/bin/env bash
# Prints the path of a real OpenTelemetry Collector (the OTLP receiver; the file and debug exporters),
# built once from the Go module proxy out of scripts/telemetry/collector/ and cached by version and
# sources. The last line printed is that path; everything else goes to stderr.
#
# Built once: callers at the same time wait on a lock ($KEEL_CACHE_DIR/.otelcol-<version>.lock) and
# then find it built. Verified on every use: the binary's sha256, recorded at build time in
# SHA256SUMS, must match, and it must run and report this version; a cached build that fails either is
# said so and rebuilt.
#
# The build runs at the lowest priority, with the same flags and Go build cache as
# scripts/cluster/temporal-server.sh (so either reuses what the other compiled) and without debug
# information (-s -w), and says how long it took: cold (empty Go caches) about 6 to 10 minutes on two
# shared cores and 0.8 GB of memory; 1 to 2 minutes with the modules already downloaded; 3 to 8 s
# with the packages compiled (the link). With the binary cached, 0.1 s.
#   KEEL_CACHE_DIR  ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
# One block, read whole before any of it runs: bash reads a script as it goes, and this one runs for
# minutes, during which the file may be edited or checked out.
{
set -euo pipefail

# The collector's core modules release together (v0.165.0 with the v1.71.0 ones); see collector/go.mod.
version=0.165.0
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/collector"
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
# The sources' hash is part of the name: editing main.go or go.mod builds a new collector.
digest=$(cat "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" | sha256sum | cut -c1-12)
target="$cache_root/otelcol-$version-$digest"

# The sha256 of each file named, one `<hash> *<file>` line each (`sha256sum --check` reads them): by
# OpenSSL when present, several times faster than coreutils' sha256sum.
sums_of() {
  if command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r "$@"; else sha256sum --binary "$@"; fi
}

# Whether the binary in $1 is the one recorded in its SHA256SUMS and reports $version; when not,
# `problem` says why.
problem=""
verified() {
  local dir=$1 out actual recorded
  problem=""
  if [ ! -x "$dir/bin/otelcol" ]; then
    [ -e "$dir" ] && problem="$dir/bin/otelcol is missing"
    return 1
  fi
  if [ -f "$dir/SHA256SUMS" ]; then
    actual=$(cd "$dir" && sums_of bin/otelcol | sed -E 's/^([0-9a-f]+) [ *]/\1 /')
    recorded=$(sed -E 's/^([0-9a-f]+) [ *]/\1 /' "$dir/SHA256SUMS")
    if [ "$actual" != "$recorded" ]; then
      problem="the sha256 of bin/otelcol does not match the one recorded in SHA256SUMS when it was built (corrupt or replaced)"
      return 1
    fi
  fi
  out=$(timeout 60 "$dir/bin/otelcol" --version 2>&1) || {
    problem="bin/otelcol --version failed (exit $?)${out:+: $out}"
    return 1
  }
  if [ "$out" != "keel-otelcol version $version" ]; then
    problem="bin/otelcol --version says '$out', not 'keel-otelcol version $version'"
    return 1
  fi
  if [ ! -f "$dir/SHA256SUMS" ]; then
    # Built before sums were recorded: it runs and reports the version, so record it now.
    local sums
    sums=$(mktemp "$dir/.SHA256SUMS.XXXXXX")
    (cd "$dir" && sums_of bin/otelcol >"$sums" && mv "$sums" SHA256SUMS)
    echo "Recorded the sha256 of the OpenTelemetry Collector $version in $dir (built before sums were kept)." >&2
  fi
}

mkdir -p "$cache_root"
lock="$cache_root/.otelcol-$version.lock"
exec 9>"$lock"
# Shared while checking the cache, exclusive while building: test files starting at once check it
# together, and build it once, the others waiting here and then finding it built.
if ! flock -n -s 9; then
  echo "Waiting for another build of the OpenTelemetry Collector $version to finish (it holds $lock)..." >&2
  flock -s 9
fi
if verified "$target"; then
  echo "$target/bin/otelcol"
  exit 0
fi
if ! flock -n 9; then
  echo "Waiting for others checking or building the OpenTelemetry Collector $version to finish (they hold $lock)..." >&2
  flock 9
fi
if verified "$target"; then
  echo "$target/bin/otelcol"
  exit 0
fi
[ -z "$problem" ] || echo "The cached OpenTelemetry Collector $version in $target is not usable: $problem. Rebuilding it." >&2

if ! command -v go >/dev/null 2>&1; then
  echo "Building the OpenTelemetry Collector $version needs Go (https://go.dev/dl/); none is on PATH." >&2
  exit 1
fi

# A build killed before its trap ran (SIGKILL, the OOM killer) leaves its work directory. None is in
# use now: a build holds this lock exclusively, and so do the processes it started, which inherit it.
for stale in "$cache_root/.otelcol-$version".??????; do
  [ -d "$stale" ] || continue
  echo "Removing $stale, left by a build that was killed." >&2
  chmod -R u+w "$stale" 2>/dev/null || true
  rm -rf "$stale"
done

# Built beside the target and renamed into place, so an interrupted build never looks complete.
work=$(mktemp -d "$cache_root/.otelcol-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
echo "Building the OpenTelemetry Collector $version from the Go module proxy (once; cached in $target)..." >&2
cp "$source_dir/main.go" "$source_dir/go.mod" "$source_dir/go.sum" "$work/"
(cd "$work" && nice -n 19 go build -trimpath -ldflags='-s -w' -o "$work/bin/otelcol" .) >&2
rm -f "$work/main.go" "$work/go.mod" "$work/go.sum"
(cd "$work" && sums_of bin/otelcol >SHA256SUMS)
if ! verified "$work"; then
  echo "The OpenTelemetry Collector $version just built in $work is not usable: $problem" >&2
  exit 1
fi
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "Built the OpenTelemetry Collector $version in $(($(date +%s) - started)) s" >&2
echo "$target/bin/otelcol"
exit
}
