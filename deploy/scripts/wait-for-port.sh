# Sourced by the other scripts here. wait_for_port HOST PORT WHAT: waits until HOST:PORT accepts
# connections, up to 300 s. The scripts wait themselves, not only through Compose's health checks:
# a runtime without them (Podman without systemd) starts a job as soon as the container it depends
# on starts, and a loaded server takes minutes.
wait_for_port() {
  echo "Waiting for $3 at $1:$2..."
  waited=0
  until nc -z -w 2 "$1" "$2"; do
    waited=$((waited + 2))
    if [ "$waited" -ge 300 ]; then
      echo "$3 at $1:$2 did not answer in 300 s"
      return 1
    fi
    sleep 2
  done
}
