-- the fairness scenario: one key with 100,000 pending jobs enqueued first, 99 keys with 10 each;
-- completions only delete (the backlog drains)
CREATE OR REPLACE FUNCTION only_done(ids bigint[]) RETURNS int LANGUAGE sql AS $$
  WITH d AS (DELETE FROM lim_jobs WHERE id = ANY(ids) RETURNING 1) SELECT count(*)::int FROM d $$;
TRUNCATE lim_jobs;
INSERT INTO lim_jobs (key)
SELECT key FROM (SELECT 0 AS key FROM generate_series(1, 100000)
                 UNION ALL SELECT k FROM generate_series(1, 99) k, generate_series(1, 10)) s
ORDER BY key = 0 DESC;
