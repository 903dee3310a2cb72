-- rate limit prototype: at most :m starts per key in any window of :w ms
DROP TABLE IF EXISTS rl_jobs, rl_keys, rl_starts;
CREATE TABLE rl_jobs (id bigserial PRIMARY KEY, key int NOT NULL, status text NOT NULL DEFAULT 'pending');
CREATE INDEX ON rl_jobs (key, id) WHERE status = 'pending';
CREATE INDEX ON rl_jobs (id) WHERE status = 'pending';
CREATE TABLE rl_keys (key int PRIMARY KEY);            -- only ever locked
CREATE TABLE rl_starts (key int NOT NULL, at timestamptz NOT NULL);   -- insert-only (rotating tables in the library)
CREATE INDEX ON rl_starts (key, at);
INSERT INTO rl_keys SELECT generate_series(0, :keys - 1);
INSERT INTO rl_jobs (key) SELECT (random() * (:keys - 1))::int FROM generate_series(1, 100000);
VACUUM ANALYZE rl_jobs;

-- statement 1 locks the keys of the first candidates; statement 2, whose snapshot follows the
-- locks, starts per key at most m minus the starts already in the window, and records the starts
CREATE OR REPLACE FUNCTION rl_claim(n int, m int, w interval) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE ks int[];
BEGIN
  SELECT array_agg(k.key) INTO ks FROM (
    SELECT k.key FROM rl_keys k WHERE k.key IN (SELECT c.key FROM (SELECT key FROM rl_jobs WHERE status = 'pending' ORDER BY id LIMIT n) c)
    FOR UPDATE OF k SKIP LOCKED) k;
  IF ks IS NULL THEN RETURN; END IF;
  RETURN QUERY
  WITH t AS (SELECT clock_timestamp() AS now),
    room AS (SELECT k.key, m - (SELECT count(*) FROM rl_starts s, t WHERE s.key = k.key AND s.at >= t.now - w) AS left
             FROM unnest(ks) AS k(key)),
    cand AS (SELECT x.id, x.key, row_number() OVER (PARTITION BY x.key ORDER BY x.id) rn
             FROM (SELECT j.id, j.key FROM rl_jobs j WHERE j.status = 'pending' AND j.key = ANY(ks) ORDER BY j.id LIMIT n FOR UPDATE SKIP LOCKED) x),
    picked AS (SELECT c.id, c.key FROM cand c JOIN room r ON r.key = c.key AND c.rn <= r.left),
    started AS (INSERT INTO rl_starts SELECT p.key, t.now FROM picked p, t RETURNING 1)
  UPDATE rl_jobs j SET status = 'running' FROM picked p WHERE j.id = p.id RETURNING j.id;
END $$;

-- naive: no lock, the window counted with the statement's own snapshot
CREATE OR REPLACE FUNCTION rl_naive(n int, m int, w interval) RETURNS SETOF bigint LANGUAGE sql AS $$
  WITH t AS (SELECT clock_timestamp() AS now),
    cand AS (SELECT x.id, x.key, row_number() OVER (PARTITION BY x.key ORDER BY x.id) rn
             FROM (SELECT j.id, j.key FROM rl_jobs j WHERE j.status = 'pending' ORDER BY j.id LIMIT n FOR UPDATE SKIP LOCKED) x),
    room AS (SELECT c.key, m - (SELECT count(*) FROM rl_starts s, t WHERE s.key = c.key AND s.at >= t.now - w) AS left
             FROM (SELECT DISTINCT key FROM cand) c),
    picked AS (SELECT c.id, c.key FROM cand c JOIN room r ON r.key = c.key AND c.rn <= r.left),
    started AS (INSERT INTO rl_starts SELECT p.key, t.now FROM picked p, t RETURNING 1)
  UPDATE rl_jobs j SET status = 'running' FROM picked p WHERE j.id = p.id RETURNING j.id $$;

-- ground truth: the most starts of one key in any window of length w (each start as a window's end)
CREATE OR REPLACE FUNCTION rl_worst(w interval) RETURNS bigint LANGUAGE sql AS $$
  SELECT coalesce(max(c), 0) FROM (SELECT count(*) OVER (PARTITION BY key ORDER BY at RANGE BETWEEN w PRECEDING AND CURRENT ROW) c FROM rl_starts) x $$;
