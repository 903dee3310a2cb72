#!/bin/bash
# What the keyed claim (concurrency limits per key) costs the server against the plain claim: the
# library's own statements (keyed.bench, plain.bench, as rendered on 2026-11-28) in pgbench, with
# synchronous_commit off for the session so that the commit's flush does not hide the difference.
# Needs the locksmith schema: the script builds the tool (../../../locksmith) to migrate a database
# it creates and drops. Usage: run.sh [rounds], against 127.0.0.1:5432 as postgres (PGHOST, PGPORT,
# PGUSER override); 100,000 jobs over 100 keys, limit 4 or none, 4 clients x 5,000 claims, a VACUUM
# every 0.5 s meanwhile (as the workers' own), the variants alternated. The server's own settings
# (fsync, autovacuum) stay as they are: name them with the figures.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-2}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
db=locksmith_claim_cost
psql -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
stop=$(mktemp -u)
trap 'touch "$stop"; wait; rm -f "$stop"; psql -q -d postgres -c "DROP DATABASE IF EXISTS $db"' EXIT
../../../locksmith migrate --modules queue --url "jdbc:postgresql://$PGHOST:$PGPORT/$db?user=$PGUSER" > /dev/null
fill() { # limit (0: none)
  psql -q -d $db <<SQL
TRUNCATE locksmith.jobs; DELETE FROM locksmith.job_concurrency_limits;
SELECT setseed(0.34) \gset
INSERT INTO locksmith.jobs (queue, kind, concurrency_key)
  SELECT 'bench', 'noop', 'tenant-' || floor(random() * 100)::int FROM generate_series(1, 100000);
INSERT INTO locksmith.job_concurrency_limits (queue, concurrency_key, max_running)
  SELECT 'bench', '', $1 WHERE $1 > 0;
VACUUM ANALYZE locksmith.jobs;
CHECKPOINT;
SQL
}
run() { # name limit
  fill "$2"
  (while [ ! -f "$stop" ]; do psql -q -d $db -c "VACUUM locksmith.jobs" 2>/dev/null || true; sleep 0.5; done) &
  PGOPTIONS='-c synchronous_commit=off' pgbench -n -c 4 -j 2 -t 5000 -M prepared -D walked_to=- -f "$1.bench" $db 2>&1 \
    | grep -E "^tps" | sed "s/^/$1 /"
  touch "$stop"; wait; rm -f "$stop"
}
for r in $(seq "$rounds"); do
  run plain 0
  run keyed 4
done
