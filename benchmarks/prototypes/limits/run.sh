#!/bin/bash
# The limits-per-key prototypes of issue 34 (plain SQL and pgbench; not the library): exactness of
# the concurrency limit and of the rate limit against their naive one-statement variants, fairness
# across keys, and throughput against the same claim without limits. Each step creates its own
# database and drops it. Usage: run.sh [psql connection options], e.g. run.sh -h 127.0.0.1 -U postgres
# (SKIP_THROUGHPUT=1 leaves out the throughput rounds, the only step that needs a quiet machine)
set -euo pipefail
cd "$(dirname "$0")"
conn=("$@")
export PGOPTIONS="-c client_min_messages=warning"
fresh() { psql -q "${conn[@]}" -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; }
bench() { local db=$1; shift; pgbench "${conn[@]}" -n -M prepared "$@" "$db" 2>&1 | grep -E "tps =|failed transactions|aborted" | head -3 || true; }
q() { psql "${conn[@]}" -d "$1" -Atc "$2"; }

echo "== concurrency limit, exactness: 4 keys x limit 2, 8 clients, jobs held 5 ms, 8 s"
for v in lim fair naive; do
  fresh lim_exact; psql -q "${conn[@]}" -d lim_exact -v keys=4 -v lim=2 -f setup.sql -f fair.sql >/dev/null
  echo "-- $v (a second running job in a slot is a unique violation: aborted clients)"
  bench lim_exact -c 8 -j 2 -T 8 -D keys=4 -D lim=2 -D hold=5000 -f $v.bench
done

echo "== fairness: one key with 100,000 jobs first, 99 keys with 10; limit 4, 4 clients, held 2 ms, 5 s"
for v in lim fair; do
  fresh lim_fair; psql -q "${conn[@]}" -d lim_fair -v keys=100 -v lim=4 -f setup.sql -f fair.sql -f fairness.sql >/dev/null
  psql -q "${conn[@]}" -d lim_fair -c "VACUUM ANALYZE lim_jobs"
  bench lim_fair -c 4 -j 2 -T 5 -D keys=100 -D hold=2000 -f $v-drain.bench
  echo "-- $v: left of the small keys' 990 jobs | of the big key's 100,000: $(q lim_fair "SELECT count(*) FILTER (WHERE key > 0) || ' | ' || count(*) FILTER (WHERE key = 0) FROM lim_jobs")"
done

echo "== rate limit, exactness: 20 keys, 5 starts per 100 ms, 8 clients, 5 s"
for v in rl_claim rl_naive; do
  fresh lim_rate; psql -q "${conn[@]}" -d lim_rate -v keys=20 -f rate.sql >/dev/null
  bench lim_rate -c 8 -j 2 -T 5 -D m=5 -f $v.bench
  echo "-- $v: starts | most starts of one key in any 100 ms: $(q lim_rate "SELECT count(*) || ' | ' || rl_worst(interval '100 milliseconds') FROM rl_starts")"
done

if [ -n "${SKIP_THROUGHPUT:-}" ]; then
  for db in lim_exact lim_fair lim_rate; do psql -q "${conn[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db"; done
  exit 0
fi
echo "== throughput: 100 keys x limit 4, 4 clients, claims of up to 10, no hold, 20 s each, alternated, 3 rounds"
fresh lim_tput; psql -q "${conn[@]}" -d lim_tput -v keys=100 -v lim=4 -f setup.sql -f fair.sql >/dev/null
for round in 1 2 3; do
  for v in plain lim fair; do
    psql -q "${conn[@]}" -d lim_tput -c "UPDATE lim_jobs SET status = 'pending', slot = NULL WHERE status = 'running'" -c "VACUUM ANALYZE lim_jobs"
    # jobs/s from the id sequence: every completed job is replaced by a new one
    before=$(q lim_tput "SELECT last_value FROM lim_jobs_id_seq")
    bench lim_tput -c 4 -j 2 -T 20 -D keys=100 -D lim=4 -D hold=0 -f $v.bench >/dev/null
    after=$(q lim_tput "SELECT last_value FROM lim_jobs_id_seq")
    echo "-- round $round $v: $(( (after - before) / 20 )) jobs/s"
  done
done
for db in lim_exact lim_fair lim_rate lim_tput; do psql -q "${conn[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db"; done
