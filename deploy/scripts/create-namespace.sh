#!/bin/sh
# Creates the namespace Keel runs in and registers Keel's search attributes on it. Runs in
# temporalio/admin-tools once the server is healthy, on every `docker compose up`: an existing
# namespace is kept, and creating a search attribute that already exists with the same type is a
# no-op. The attributes must match src/workflows/search-attributes.ts (test/deploy checks it).
# Waiting and namespace creation as in temporalio/samples-server compose/scripts/create-namespace.sh.
set -eu

NAMESPACE=${DEFAULT_NAMESPACE:-default}
TEMPORAL_ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
host=${TEMPORAL_ADDRESS%:*}
port=${TEMPORAL_ADDRESS##*:}

. "$(dirname "$0")/wait-for-port.sh"
wait_for_port "$host" "$port" "the Temporal frontend"
# The server binds IPv4 only (BIND_ON_IP=0.0.0.0); dial the address the name resolves to, not a
# possibly IPv6 first answer.
ip=$(getent ahosts "$host" | grep STREAM | head -1 | awk '{print $1}')
address="${ip}:${port}"

# Runs a command until it succeeds, at most 10 times: a namespace that was just created takes a few
# seconds to reach every frontend cache, and attributes cannot be added to it before.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 40 ]; then
      echo "Giving up after ${attempt} attempts: $*"
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 3
  done
}

retry temporal operator cluster health --address "$address"

if ! temporal operator namespace describe --namespace "$NAMESPACE" --address "$address" >/dev/null 2>&1; then
  echo "Creating namespace ${NAMESPACE}..."
  retry temporal operator namespace create --namespace "$NAMESPACE" --address "$address"
fi

echo "Registering Keel's search attributes on ${NAMESPACE}..."
retry temporal operator search-attribute create --namespace "$NAMESPACE" --address "$address" --name KeelStatus --type Keyword
retry temporal operator search-attribute create --namespace "$NAMESPACE" --address "$address" --name KeelModel --type Keyword
retry temporal operator search-attribute create --namespace "$NAMESPACE" --address "$address" --name KeelTurns --type Int
retry temporal operator search-attribute create --namespace "$NAMESPACE" --address "$address" --name KeelTokens --type Int

temporal operator search-attribute list --namespace "$NAMESPACE" --address "$address"
echo "Namespace ${NAMESPACE} is ready for Keel"
