#!/usr/bin/env bash
# Makes what the tests need and its caches lack, ahead of the tests:
#   1. the LiteLLM proxy (scripts/litellm/litellm.sh, from PyPI), which `npm test` needs;
#   2. the OpenTelemetry Collector (scripts/telemetry/collector.sh), which `npm test` needs;
#   3. the Temporal server and temporal-sql-tool (scripts/cluster/temporal-server.sh), which
#      `npm run test:cluster` needs;
#   4. Podman, podman-compose and the local stand-ins for the compose stack's upstream images
#      (scripts/compose/), which `npm run test:compose` needs (after 3: two are made from its build);
#   5. llama.cpp's server and a tiny model (scripts/llama/llama-server.sh), which
#      `npm run test:real-model` needs.
# Each through its own script, so the lock, cache and verification are the same as when a test asks:
# a test that needs a binary still being built here waits for it on that script's lock. One after the
# other, so the second reuses the Go build cache the first filled, at the lowest priority. Meant to be
# started in the background (.ci/run starts it first thing):
#   scripts/prebuild-binaries.sh [LOG]    (LOG: write everything there instead of stdout and stderr)
# Exits non-zero when any of them failed; each line it writes itself starts with `prebuild:`.
# One block, read whole before any of it runs: bash reads a script as it goes, and this one runs for
# minutes, during which the file may be edited or checked out.
{
set -uo pipefail

if [ $# -gt 0 ]; then
  exec >"$1" 2>&1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
started=$SECONDS
failed=""

build() {
  local name=$1 script=$2 began=$SECONDS output status=0
  echo "prebuild: $name ($script)..."
  output=$(nice -n 19 bash "$script") || status=$?
  if [ "$status" -eq 0 ]; then
    echo "prebuild: $name ready in $((SECONDS - began)) s: $(tail -n 1 <<<"$output")"
  else
    echo "prebuild: $name FAILED (exit $status) after $((SECONDS - began)) s; its output is above"
    failed="$failed $name;"
  fi
}

build "LiteLLM proxy" "$here/litellm/litellm.sh"
build "OpenTelemetry Collector" "$here/telemetry/collector.sh"
build "Temporal server" "$here/cluster/temporal-server.sh"
build "Podman" "$here/compose/podman.sh"
build "podman-compose" "$here/compose/podman-compose.sh"
build "compose stand-in images" "$here/compose/stand-in-images.sh"
build "llama-server" "$here/llama/llama-server.sh"

if [ -n "$failed" ]; then
  echo "prebuild: failed after $((SECONDS - started)) s:${failed%;}"
  exit 1
fi
echo "prebuild: all ready in $((SECONDS - started)) s"
exit
}
