package dev.locksmith.bench;

import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.io.StringReader;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.postgresql.PGConnection;

/**
 * enqueue: no-op jobs into an empty table, each call its own transaction, with the queue's
 * default settings (NOTIFY on). {@code batch=1000}: {@code enqueueAll} of 1,000 jobs against a
 * plain JDBC {@code COPY} of the same 1,000 rows (the fastest way to load rows), pgbench running
 * the library's statement (its arrays built on the server) and pgbench's plain
 * {@code INSERT ... SELECT FROM generate_series}. {@code batch=1}: {@code enqueue} of one job
 * against a plain JDBC single-row {@code INSERT}, and both in pgbench.
 */
final class EnqueueWorkload implements Workload {

    private final DataSource ds;
    private final DSLContext dsl;
    private final Optional<PgBench> pgbench;

    EnqueueWorkload(DataSource ds, DSLContext dsl, Optional<PgBench> pgbench) {
        this.ds = ds;
        this.dsl = dsl;
        this.pgbench = pgbench;
    }

    @Override
    public String name() {
        return "enqueue";
    }

    @Override
    public List<Case> cases(BenchOptions o) {
        List<Case> cases = new ArrayList<>();
        for (int batch : o.quick() ? List.of(1000) : List.of(1, 1000)) {
            for (int workers : o.workersOr(batch == 1 ? List.of(4, 16) : List.of(1, 4))) {
                Variant raw = batch == 1 ? rawInsert() : rawCopy(batch);
                Case c = Workload.inEveryMode(
                        "batch=" + batch, workers, "jobs/s", dsl, library -> library(library, batch), raw);
                cases.add(pgbench.map(p -> c.withPgbench(
                                p.variant(raw, ds, libraryScript(batch), workers, o, 0),
                                p.variant(raw, ds, plainScript(batch), workers, o, 0)))
                        .orElse(c));
            }
        }
        return cases;
    }

    /** Every variant starts from an empty table; nothing can be lost, so nothing to verify. */
    private abstract static class Empty implements Variant {
        private final DataSource ds;

        Empty(DataSource ds) {
            this.ds = ds;
        }

        @Override
        public void prepare() throws Exception {
            Jdbc.autoCommit(ds, c -> Jdbc.update(c, "TRUNCATE jobs"));
        }

        @Override
        public long verify() {
            return 0;
        }
    }

    private Variant library(DSLContext on, int batch) {
        JobQueue queue = new JobQueue(on);
        List<NewJob> jobs = Collections.nCopies(batch, NewJob.of(QueueWorkloads.QUEUE, "noop"));
        return new Empty(ds) {
            @Override
            public Op op(int worker) {
                return batch == 1
                        ? () -> {
                            queue.enqueue(on, jobs.get(0));
                            return 1;
                        }
                        : () -> queue.enqueueAll(on, jobs).size();
            }
        };
    }

    private Variant rawCopy(int batch) {
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < batch; i++) {
            rows.append(QueueWorkloads.QUEUE).append("\t0\tnoop\t{}\t100\t25\n");
        }
        String data = rows.toString();
        return new Empty(ds) {
            @Override
            public Op op(int worker) {
                return () -> (int) (long) Jdbc.autoCommit(ds, c -> {
                    try {
                        return c.unwrap(PGConnection.class)
                                .getCopyAPI()
                                .copyIn(
                                        "COPY jobs (queue, shard, kind, payload, priority, max_attempts) FROM STDIN",
                                        new StringReader(data));
                    } catch (java.io.IOException e) {
                        throw new SQLException(e);
                    }
                });
            }
        };
    }

    private Variant rawInsert() {
        return new Empty(ds) {
            @Override
            public Op op(int worker) {
                return () -> Jdbc.autoCommit(ds, c -> {
                    try (PreparedStatement s =
                            c.prepareStatement("INSERT INTO jobs (queue, kind) VALUES (?, 'noop') RETURNING id")) {
                        s.setString(1, QueueWorkloads.QUEUE);
                        try (ResultSet rs = s.executeQuery()) {
                            rs.next();
                            return 1;
                        }
                    }
                });
            }
        };
    }

    /**
     * The library's enqueue statement for jobs without unique keys (JobQueue with NOTIFY on) for
     * pgbench, its arrays built on the server by {@code array_fill}.
     */
    static String libraryScript(int batch) {
        String n = "ARRAY[" + batch + "]";
        return "INSERT INTO jobs (queue, shard, kind, payload, priority, run_at, max_attempts, "
                + "unique_key, traceparent, ordering_key) SELECT t.queue, t.shard, t.kind, CAST(t.payload AS jsonb), "
                + "CAST(t.priority AS smallint), statement_timestamp() + t.delay_us * interval '1 microsecond', "
                + "t.max_attempts, t.unique_key, CAST(NULL AS varchar), t.ordering_key FROM unnest("
                + "array_fill('bench'::varchar, " + n + "), array_fill(0, " + n + "), "
                + "array_fill('noop'::varchar, " + n + "), array_fill('{}'::varchar, " + n + "), "
                + "array_fill(100, " + n + "), array_fill(0::bigint, " + n + "), array_fill(25, " + n + "), "
                + "array_fill(NULL::varchar, " + n + "), array_fill(NULL::varchar, " + n + ")) "
                + "AS t(queue, shard, kind, payload, priority, delay_us, max_attempts, unique_key, ordering_key) "
                + "WHERE (SELECT count(pg_notify('locksmith_jobs', n.queue)) "
                + "FROM unnest(ARRAY['bench']::varchar[]) AS n(queue)) >= 0 RETURNING id;\n";
    }

    /** The plainest insert of the same rows. */
    static String plainScript(int batch) {
        return batch == 1
                ? "INSERT INTO jobs (queue, kind) VALUES ('bench', 'noop') RETURNING id;\n"
                : "INSERT INTO jobs (queue, kind) SELECT 'bench', 'noop' FROM generate_series(1, " + batch + ");\n";
    }
}
