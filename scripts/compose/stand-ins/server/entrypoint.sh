#!/bin/sh
# What the upstream image's entrypoint does before the server starts: bind to the container's own
# address unless BIND_ON_IP says otherwise and, when bound to every interface, tell the cluster
# that address (the server refuses to start without it); then the server, from its config template.
set -eu
own_address=$(getent hosts "$(hostname)" | awk '{print $1; exit}')
: "${BIND_ON_IP:=$own_address}"
export BIND_ON_IP
if [ "$BIND_ON_IP" = 0.0.0.0 ] || [ "$BIND_ON_IP" = ::0 ]; then
  : "${TEMPORAL_BROADCAST_ADDRESS:=$own_address}"
  export TEMPORAL_BROADCAST_ADDRESS
fi
exec temporal-server --config-file /etc/temporal/config/docker.yaml start "$@"
