package dev.locksmith.bench;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.Observation;
import dev.locksmith.observe.Operation;
import dev.locksmith.observe.Outcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The queues of {@link HorizonBench}: locksmith's {@code JobWorker} (or, with
 * {@code --loads transactional}, its {@code TransactionalWorker}), and a plain DELETE queue.
 */
final class HorizonQueues {

    static final String QUEUE = "horizon";
    /** The transactional worker's queue, apart from the leased one's when both run. */
    static final String TRANSACTIONAL_QUEUE = "horizon-tx";

    static final String PLAIN_TABLE = "horizon_plain_queue";
    /** Consumer threads of the plain queue: as many as a {@code JobWorker}'s default. */
    static final int PLAIN_THREADS = 4;

    private HorizonQueues() {}

    /** Runs {@code s} and counts the rows it returned. */
    static int rows(PreparedStatement s) throws java.sql.SQLException {
        int n = 0;
        try (ResultSet r = s.executeQuery()) {
            while (r.next()) {
                n++;
            }
        }
        return n;
    }

    /**
     * A default {@code JobWorker}, or a default {@code TransactionalWorker} (whose transactions
     * hold a lock on every partition of jobs while their handlers run, which each TRUNCATE of a
     * drained generation must wait out); the timed statement is its claim, as its observer sees it.
     */
    static final class Library extends HorizonLoad {
        private final DataSource ds;
        private final String schema;
        private final int rate;
        private final int batch;
        private final boolean transactional;
        private final List<Thread> threads = new ArrayList<>();
        private @Nullable Worker worker;

        Library(DataSource ds, String schema, int rate, int batch, int phases, boolean transactional) {
            super(phases);
            this.ds = ds;
            this.schema = schema;
            this.rate = rate;
            this.batch = batch;
            this.transactional = transactional;
        }

        @Override
        String label() {
            return transactional ? "locksmith TransactionalWorker, defaults" : "locksmith JobWorker, defaults";
        }

        @Override
        String timed() {
            return "the worker's claim (its observer's ClaimJobs)";
        }

        @Override
        List<String> tables() {
            return List.of(schema + ".jobs");
        }

        @Override
        boolean hasBacklog() {
            return true;
        }

        @Override
        void start() {
            LocksmithObserver timing = new LocksmithObserver() {
                @Override
                public Observation start(Operation operation) {
                    if (!(operation instanceof Operation.ClaimJobs)) {
                        return Observation.NONE;
                    }
                    long begin = System.nanoTime();
                    return new Observation() {
                        @Override
                        public void end(Outcome outcome) {
                            times().time(System.nanoTime() - begin);
                        }

                        @Override
                        public void error(Throwable error) {
                            failures.incrementAndGet();
                        }
                    };
                }
            };
            JobQueue workerQueue = new JobQueue(
                    Locksmith.builder(ds).schema(schema).observer(timing).build());
            String queue = transactional ? TRANSACTIONAL_QUEUE : QUEUE;
            worker = transactional
                    ? TransactionalWorker.builder(workerQueue, queue, (claimed, tx) -> done.addAndGet(claimed.size()))
                            .build()
                            .start()
                    : JobWorker.builder(workerQueue, queue, (job, tx) -> done.incrementAndGet())
                            .build()
                            .start();
            Locksmith producing = Locksmith.builder(ds).schema(schema).build();
            JobQueue producerQueue = new JobQueue(producing);
            List<NewJob> jobs = Collections.nCopies(batch, NewJob.of(queue, "noop"));
            threads.add(paced("horizon-producer", Math.max(1, rate / batch), () -> {
                producing.dsl().transaction(c -> producerQueue.enqueueAll(c.dsl(), jobs));
                produced.addAndGet(batch);
            }));
        }

        @Override
        public void close() throws Exception {
            join(threads);
            if (worker != null) {
                worker.close();
            }
        }
    }

    /**
     * The plainest queue: {@code DELETE ... WHERE id IN (SELECT id ... ORDER BY id LIMIT n FOR
     * UPDATE SKIP LOCKED) RETURNING id}, auto-committed, on {@link #PLAIN_THREADS} threads that
     * sleep 5 ms after an empty claim; the timed statement is that DELETE.
     */
    static final class Plain extends HorizonLoad {
        private final DataSource ds;
        private final String table;
        /** {@link #table}, quoted for the statements. */
        private final String quoted;

        private final int rate;
        private final int batch;
        private final List<Thread> threads = new ArrayList<>();

        Plain(DataSource ds, String schema, int rate, int batch, int phases) throws Exception {
            super(phases);
            this.ds = ds;
            this.table = schema + "." + PLAIN_TABLE;
            this.quoted = DSL.using(SQLDialect.POSTGRES).render(DSL.name(schema, PLAIN_TABLE));
            this.rate = rate;
            this.batch = batch;
            Jdbc.autoCommit(ds, c -> {
                Jdbc.update(c, "DROP TABLE IF EXISTS " + quoted);
                return Jdbc.update(
                        c,
                        "CREATE TABLE " + quoted + " (id bigserial PRIMARY KEY, payload jsonb NOT NULL DEFAULT '{}',"
                                + " created_at timestamptz NOT NULL DEFAULT now())");
            });
        }

        @Override
        String label() {
            return "plain DELETE ... SKIP LOCKED, " + batch + " per tx";
        }

        @Override
        String timed() {
            return "the consumer's DELETE statement";
        }

        @Override
        List<String> tables() {
            return List.of(table);
        }

        @Override
        boolean hasBacklog() {
            return true;
        }

        @Override
        void start() {
            String insert = "INSERT INTO " + quoted + " (payload) SELECT '{}'::jsonb FROM generate_series(1, ?)";
            threads.add(paced("horizon-plain-producer", Math.max(1, rate / batch), () -> {
                Jdbc.autoCommit(ds, c -> Jdbc.update(c, insert, batch));
                produced.addAndGet(batch);
            }));
            // the limit a literal (an int option), as in the library's claims: a generic plan for
            // LIMIT $1 assumes a tenth of the table and may scan and sort instead of reading the index
            String claim = "DELETE FROM " + quoted + " WHERE id IN (SELECT id FROM " + quoted + " ORDER BY id LIMIT "
                    + DSL.using(SQLDialect.POSTGRES).render(DSL.inline(batch))
                    + " FOR UPDATE SKIP LOCKED) RETURNING id";
            for (int i = 0; i < PLAIN_THREADS; i++) {
                Thread t = new Thread(() -> consume(claim), "horizon-plain-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        private void consume(String claim) {
            try (Connection c = ds.getConnection();
                    PreparedStatement s = c.prepareStatement(claim)) {
                c.setAutoCommit(true);
                consumeUntilStopped(() -> rows(s));
            } catch (Exception e) {
                failures.incrementAndGet();
            }
        }

        @Override
        public void close() throws Exception {
            join(threads);
        }
    }
}
