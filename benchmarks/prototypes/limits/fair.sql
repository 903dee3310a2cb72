CREATE INDEX IF NOT EXISTS lim_jobs_key_pending ON lim_jobs (key, id) WHERE status = 'pending';

-- the fair limited claim: keys with pending jobs are walked from a random one (a loose index scan,
-- one probe per key visited), and for each key visited its free slots are locked, until n slots;
-- statement 2 as lim_claim's
CREATE OR REPLACE FUNCTION fair_claim(n int, keys int) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE ks int[]; ss smallint[]; start int := (random() * keys)::int;
BEGIN
  SELECT array_agg(s.key), array_agg(s.slot) INTO ks, ss FROM (
    WITH RECURSIVE after AS (
        (SELECT key FROM lim_jobs WHERE status = 'pending' AND key >= start ORDER BY key LIMIT 1)
        UNION ALL
        SELECT (SELECT j.key FROM lim_jobs j WHERE j.status = 'pending' AND j.key > a.key ORDER BY j.key LIMIT 1)
        FROM after a WHERE a.key IS NOT NULL),
      before AS (
        (SELECT key FROM lim_jobs WHERE status = 'pending' AND key < start ORDER BY key LIMIT 1)
        UNION ALL
        SELECT (SELECT j.key FROM lim_jobs j WHERE j.status = 'pending' AND j.key > b.key AND j.key < start ORDER BY j.key LIMIT 1)
        FROM before b WHERE b.key IS NOT NULL),
      walk AS (SELECT key, 0 AS lap FROM after WHERE key IS NOT NULL UNION ALL SELECT key, 1 FROM before WHERE key IS NOT NULL)
    SELECT s.key, s.slot FROM walk w JOIN LATERAL (
        SELECT s.key, s.slot FROM lim_slots s WHERE s.key = w.key
          AND NOT EXISTS (SELECT 1 FROM lim_jobs r WHERE r.status = 'running' AND r.key = s.key AND r.slot = s.slot)
        ORDER BY s.slot FOR UPDATE SKIP LOCKED) s ON true
    LIMIT n) s;
  IF ks IS NULL THEN RETURN; END IF;
  RETURN QUERY
  WITH free AS (SELECT * FROM lim_free(ks, ss)),
    cand AS (
      SELECT x.id, x.key, x.rn FROM (SELECT DISTINCT key FROM free) k CROSS JOIN LATERAL (
        SELECT j.id, j.key, row_number() OVER (ORDER BY j.id) rn FROM (
          SELECT j.id, j.key FROM lim_jobs j WHERE j.status = 'pending' AND j.key = k.key
          ORDER BY j.id LIMIT (SELECT count(*) FROM free f WHERE f.key = k.key) FOR UPDATE SKIP LOCKED) j) x),
    picked AS (SELECT c.id, f.slot FROM cand c JOIN free f ON f.key = c.key AND f.rn = c.rn)
  UPDATE lim_jobs j SET status = 'running', slot = p.slot FROM picked p WHERE j.id = p.id RETURNING j.id;
END $$;
