#!/usr/bin/env bash
# Prints the directory holding the real Temporal server, built once from the Go module proxy and
# cached by version: bin/temporal-server, bin/temporal-sql-tool, the server's own config template
# (config/docker.yaml, the one the temporalio/server image renders from its environment) and the
# PostgreSQL schema (schema/postgresql/v12). The last line printed is that directory; everything else
# goes to stderr.
#
# Built once: callers at the same time wait on a lock ($KEEL_CACHE_DIR/.temporal-server-<version>.lock)
# and then find it built. Verified on every use: the sha256 of each binary, recorded at build time in
# SHA256SUMS, must match, and both binaries must run and report this version (`--version`); a cached
# build that fails either is said so and rebuilt.
#
# The build runs at the lowest priority, with the same flags and Go build cache as
# scripts/telemetry/collector.sh (so either reuses what the other compiled: the standard library and
# the modules they share) and without debug information (-s -w: smaller binaries, a faster link).
# Cold (empty module cache, Go build cache holding only the collector's build) it took 14 minutes
# (860 s; 11.6 CPU-minutes) on two cores busy with other tests, and 2.6 GB of memory; it says how
# long. With the packages compiled, 10 to 15 s (the link); with the binaries cached, 0.3 s.
#   KEEL_TEMPORAL_SERVER_VERSION  (1.32.1; 1.32.2 and 1.31.5 need Go >= 1.26.10)
#   KEEL_CACHE_DIR                ($XDG_CACHE_HOME/keel, else ~/.cache/keel)
# One block, read whole before any of it runs: bash reads a script as it goes, and this one runs for
# minutes, during which the file may be edited or checked out.
{
set -euo pipefail

version=${KEEL_TEMPORAL_SERVER_VERSION:-1.32.1}
cache_root=${KEEL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keel}
target="$cache_root/temporal-server-$version"
binaries=(bin/temporal-server bin/temporal-sql-tool)

complete() {
  [ -x "$1/bin/temporal-server" ] && [ -x "$1/bin/temporal-sql-tool" ] &&
    [ -f "$1/config/docker.yaml" ] && [ -d "$1/schema/postgresql/v12/temporal/versioned" ]
}

# The sha256 of each file named, one `<hash> *<file>` line each (`sha256sum --check` reads them): by
# OpenSSL when present, about 5 times faster here than coreutils' sha256sum on the 190 MB of binaries.
sums_of() {
  if command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r "$@"; else sha256sum --binary "$@"; fi
}

# Whether the binaries in $1 are the ones recorded in its SHA256SUMS and report $version; when not,
# `problem` says why.
problem=""
verified() {
  local dir=$1 out binary expected actual recorded
  problem=""
  if ! complete "$dir"; then
    [ -e "$dir" ] && problem="$dir lacks some of the binaries, config template or schema"
    return 1
  fi
  if [ -f "$dir/SHA256SUMS" ]; then
    actual=$(cd "$dir" && sums_of "${binaries[@]}" | sed -E 's/^([0-9a-f]+) [ *]/\1 /' | sort)
    recorded=$(sed -E 's/^([0-9a-f]+) [ *]/\1 /' "$dir/SHA256SUMS" | sort)
    if [ "$actual" != "$recorded" ]; then
      problem="the sha256 of $(comm -23 <(echo "$actual") <(echo "$recorded") | cut -d' ' -f2- | paste -sd, - || true) does not match the one recorded in SHA256SUMS when it was built (corrupt or replaced)"
      return 1
    fi
  fi
  # Each says its version (a truncated binary does not run): `temporal version 1.32.1` and
  # `temporal-sql-tool version 1.32.1`.
  for binary in "${binaries[@]}"; do
    out=$(timeout 60 "$dir/$binary" --version 2>&1) || {
      problem="$binary --version failed (exit $?)${out:+: $out}"
      return 1
    }
    expected="temporal version $version"
    [ "$binary" = bin/temporal-server ] || expected="temporal-sql-tool version $version"
    if [ "$out" != "$expected" ]; then
      problem="$binary --version says '$out', not '$expected'"
      return 1
    fi
  done
  if [ ! -f "$dir/SHA256SUMS" ]; then
    # Built before sums were recorded: it runs and reports the version, so record them now.
    local sums
    sums=$(mktemp "$dir/.SHA256SUMS.XXXXXX")
    (cd "$dir" && sums_of "${binaries[@]}" >"$sums" && mv "$sums" SHA256SUMS)
    echo "Recorded the sha256 of the Temporal server $version in $dir (built before sums were kept)." >&2
  fi
}

mkdir -p "$cache_root"
lock="$cache_root/.temporal-server-$version.lock"
exec 9>"$lock"
# Shared while checking the cache, exclusive while building: callers at once check it together, and
# build it once, the others waiting here and then finding it built.
if ! flock -n -s 9; then
  echo "Waiting for another build of the Temporal server $version to finish (it holds $lock)..." >&2
  flock -s 9
fi
if verified "$target"; then
  echo "$target"
  exit 0
fi
if ! flock -n 9; then
  echo "Waiting for others checking or building the Temporal server $version to finish (they hold $lock)..." >&2
  flock 9
fi
if verified "$target"; then
  echo "$target"
  exit 0
fi
[ -z "$problem" ] || echo "The cached Temporal server $version in $target is not usable: $problem. Rebuilding it." >&2

if ! command -v go >/dev/null 2>&1; then
  echo "Building the Temporal server $version needs Go (https://go.dev/dl/); none is on PATH." >&2
  exit 1
fi

# A build killed before its trap ran (SIGKILL, the OOM killer) leaves its work directory. None is in
# use now: a build holds this lock exclusively, and so do the processes it started, which inherit it.
for stale in "$cache_root/.temporal-server-$version".??????; do
  [ -d "$stale" ] || continue
  echo "Removing $stale, left by a build that was killed." >&2
  chmod -R u+w "$stale" 2>/dev/null || true
  rm -rf "$stale"
done

# Built beside the target and renamed into place, so an interrupted build never looks complete.
work=$(mktemp -d "$cache_root/.temporal-server-$version.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
started=$(date +%s)
echo "Building the Temporal server $version and temporal-sql-tool from the Go module proxy (once; cached in $target)..." >&2
GOBIN="$work/bin" nice -n 19 go install -trimpath -ldflags='-s -w' \
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
(cd "$work" && sums_of "${binaries[@]}" >SHA256SUMS)
if ! verified "$work"; then
  echo "The Temporal server $version just built in $work is not usable: $problem" >&2
  exit 1
fi

chmod -R u+w "$target" 2>/dev/null || true
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "Built the Temporal server $version in $(($(date +%s) - started)) s" >&2
echo "$target"
exit
}
