#!/bin/sh
# Creates Temporal's two PostgreSQL databases and brings their schemas to the version the admin-tools
# image ships. Runs in temporalio/admin-tools before the server starts, on every `docker compose up`:
# each step is idempotent (an existing database is kept, setup-schema leaves a newer schema alone,
# update-schema applies only missing versions), so a newer admin-tools image upgrades the schema.
# Commands as in temporalio/samples-server compose/scripts/setup-postgres.sh.
set -eu

: "${POSTGRES_SEEDS:?}" "${DB_PORT:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
# The admin-tools image keeps the schema here; the cluster tests pass the one their server was built with.
SCHEMA_ROOT=${SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}

. "$(dirname "$0")/wait-for-port.sh"
wait_for_port "$POSTGRES_SEEDS" "$DB_PORT" PostgreSQL

# temporal-sql-tool reads the password from SQL_PASSWORD.
sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

setup_database() {
  database=$1
  versioned=$2
  echo "Setting up database ${database}..."
  sql_tool --db "$database" create
  sql_tool --db "$database" setup-schema -v 0.0
  sql_tool --db "$database" update-schema -d "${SCHEMA_ROOT}/${versioned}/versioned"
}

setup_database temporal temporal
setup_database temporal_visibility visibility
echo 'PostgreSQL schema setup complete'
