#!/bin/sh
# What the upstream postgres image does at start, the part docker-compose.yml relies on: on an empty
# data directory, initdb with POSTGRES_USER as the superuser and POSTGRES_PASSWORD as its password,
# password authentication from other hosts; then PostgreSQL in the foreground as `postgres`.
set -eu
: "${POSTGRES_PASSWORD:?the postgres image needs POSTGRES_PASSWORD}"
user=${POSTGRES_USER:-postgres}
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  initdb --username="$user" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 \
    -D "$PGDATA" >/dev/null
  rm -f "$password_file"
  printf '%s\n' "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  database=${POSTGRES_DB:-$user}
  if [ "$database" != postgres ]; then
    echo "CREATE DATABASE \"$database\";" | postgres --single -D "$PGDATA" -c listen_addresses='' postgres >/dev/null
  fi
  echo "PostgreSQL init process complete; ready for start up."
fi
[ "$1" = postgres ] && shift && exec postgres -c listen_addresses='*' "$@"
exec "$@"
