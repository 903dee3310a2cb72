DROP TABLE IF EXISTS lim_jobs, lim_slots;
CREATE TABLE lim_jobs (id bigserial PRIMARY KEY, key int NOT NULL, status text NOT NULL DEFAULT 'pending', slot smallint, payload jsonb NOT NULL DEFAULT '{}');
CREATE INDEX lim_jobs_claim ON lim_jobs (id) WHERE status = 'pending';
-- the ground truth: two running jobs of one key never hold the same slot
CREATE UNIQUE INDEX lim_jobs_running_slot ON lim_jobs (key, slot) WHERE status = 'running';
CREATE TABLE lim_slots (key int NOT NULL, slot smallint NOT NULL, PRIMARY KEY (key, slot));
INSERT INTO lim_slots SELECT k, s FROM generate_series(0, :keys - 1) k, generate_series(1, :lim) s;
INSERT INTO lim_jobs (key) SELECT (random() * (:keys - 1))::int FROM generate_series(1, 200000);
VACUUM ANALYZE lim_jobs; VACUUM ANALYZE lim_slots;

-- of the slots locked, those no running job holds (with the calling statement's snapshot), numbered
-- per key
CREATE OR REPLACE FUNCTION lim_free(ks int[], ss smallint[]) RETURNS TABLE (key int, slot smallint, rn bigint)
LANGUAGE sql STABLE AS $$
  SELECT t.key, t.slot, row_number() OVER (PARTITION BY t.key ORDER BY t.slot)
  FROM unnest(ks, ss) AS t(key, slot)
  WHERE NOT EXISTS (SELECT 1 FROM lim_jobs r WHERE r.status = 'running' AND r.key = t.key AND r.slot = t.slot) $$;

-- the limited claim: statement 1 locks free slots of the candidates' keys; statement 2, with a
-- snapshot taken after those locks, claims for each slot still free one job of its key
CREATE OR REPLACE FUNCTION lim_claim(n int) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE ks int[]; ss smallint[];
BEGIN
  SELECT array_agg(s.key), array_agg(s.slot) INTO ks, ss FROM (
    SELECT s.key, s.slot FROM lim_slots s
    WHERE s.key IN (SELECT c.key FROM (SELECT key FROM lim_jobs WHERE status = 'pending' ORDER BY id LIMIT n) c)
      AND NOT EXISTS (SELECT 1 FROM lim_jobs r WHERE r.status = 'running' AND r.key = s.key AND r.slot = s.slot)
    FOR UPDATE OF s SKIP LOCKED) s;
  IF ks IS NULL THEN RETURN; END IF;
  RETURN QUERY
  WITH free AS (SELECT * FROM lim_free(ks, ss)),
    cand AS (
      SELECT x.id, x.key, row_number() OVER (PARTITION BY x.key ORDER BY x.id) rn
      FROM (SELECT j.id, j.key FROM lim_jobs j WHERE j.status = 'pending' AND j.key = ANY(ks)
            ORDER BY j.id LIMIT n FOR UPDATE SKIP LOCKED) x),
    picked AS (SELECT c.id, f.slot FROM cand c JOIN free f ON f.key = c.key AND f.rn = c.rn)
  UPDATE lim_jobs j SET status = 'running', slot = p.slot FROM picked p WHERE j.id = p.id RETURNING j.id;
END $$;

-- the same without limits
CREATE OR REPLACE FUNCTION plain_claim(n int) RETURNS SETOF bigint LANGUAGE sql AS $$
  UPDATE lim_jobs j SET status = 'running' WHERE j.id = ANY(ARRAY(
    SELECT id FROM lim_jobs WHERE status = 'pending' ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED)) RETURNING j.id $$;

-- naive: one statement, the count read with the statement's own snapshot
CREATE OR REPLACE FUNCTION naive_claim(n int, lim int) RETURNS SETOF bigint LANGUAGE sql AS $$
  WITH cand AS (
      SELECT x.id, x.key, row_number() OVER (PARTITION BY x.key ORDER BY x.id) rn
      FROM (SELECT id, key FROM lim_jobs WHERE status = 'pending' ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED) x),
    used AS (SELECT key, array_agg(slot) slots FROM lim_jobs WHERE status = 'running' GROUP BY key),
    picked AS (
      SELECT c.id, (SELECT s FROM generate_series(1, lim) s WHERE s <> ALL (coalesce(u.slots, '{}'))
                    ORDER BY s OFFSET c.rn - 1 LIMIT 1)::smallint slot
      FROM cand c LEFT JOIN used u ON u.key = c.key)
  UPDATE lim_jobs j SET status = 'running', slot = p.slot FROM picked p WHERE j.id = p.id AND p.slot IS NOT NULL RETURNING j.id $$;

-- completion: the jobs go, as many new ones come (the backlog stays where it was)
CREATE OR REPLACE FUNCTION lim_done(ids bigint[], keys int) RETURNS int LANGUAGE sql AS $$
  WITH d AS (DELETE FROM lim_jobs WHERE id = ANY(ids) RETURNING key)
  INSERT INTO lim_jobs (key) SELECT (random() * (keys - 1))::int FROM d RETURNING 1 $$;
