package dev.locksmith.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.Locksmith;
import dev.locksmith.PoolingMode;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.TransactionalWorker;
import dev.locksmith.jobs.Worker;
import dev.locksmith.observe.LocksmithObserver;
import dev.locksmith.observe.WorkerEvent;
import dev.locksmith.provisioning.ScratchDatabase;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/**
 * A locksmith worker in a JVM of its own, for the {@code bench latency} variants whose producers
 * are in another process (as in a service that only enqueues, its workers elsewhere): it hears
 * of jobs only by {@code NOTIFY}, never from the producers' JVM directly. It writes "ready" once
 * its LISTEN is up, then "&lt;job id&gt; &lt;nanos&gt;" for each job its handler starts, on
 * {@code CLOCK_MONOTONIC} ({@link System#nanoTime()} on Linux, the producers' clock), and stops
 * when its standard input closes.
 */
public final class OtherJvmWorker {

    private OtherJvmWorker() {}

    /** Which worker the other JVM runs. */
    enum Kind {
        /** {@code JobWorker} defaults. */
        JOB_WORKER,
        /** {@code TransactionalWorker} defaults. */
        TRANSACTIONAL,
        /** {@code JobWorker} without LISTEN: the adaptive poll. */
        POLL,
        /** {@code JobWorker} without LISTEN, polling every second. */
        FIXED_POLL,
        /** {@code JobWorker} listening on a connection of its own ({@code listenVia}). */
        LISTEN_VIA
    }

    /**
     * Starts the worker in a new JVM and reports its handlers' starts to {@code run}.
     *
     * @param database the bench's database (its user, password)
     * @param url where the worker connects (the database, or a PgBouncer in front of it)
     * @param transactionPooling whether {@code url} is a PgBouncer in transaction mode
     * @param listenUrl the database itself, for {@link Kind#LISTEN_VIA}
     * @param schema locksmith's schema
     * @param queue the queue to work
     * @param kind the worker
     * @param run where the starts go
     * @return the process, "ready" already written; close its standard input to stop it
     */
    static Process start(
            ScratchDatabase database,
            String url,
            boolean transactionPooling,
            String listenUrl,
            String schema,
            String queue,
            Kind kind,
            LatencyRun run)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                OtherJvmWorker.class.getName(),
                url,
                database.user(),
                database.password() == null ? "" : database.password(),
                schema,
                queue,
                kind.name(),
                transactionPooling ? "TRANSACTION" : "SESSION",
                listenUrl));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        CountDownLatch ready = new CountDownLatch(1);
        run.readStarts(process, ready, "other-jvm-worker-output");
        boolean started = false;
        try {
            started = ready.await(60, TimeUnit.SECONDS) && process.isAlive();
        } finally {
            if (!started) {
                process.destroyForcibly();
            }
        }
        if (!started) {
            throw new IllegalStateException("the worker in another JVM did not start (see its output above)");
        }
        return process;
    }

    /**
     * Stops a worker {@link #start} started.
     *
     * @param process the worker's JVM
     */
    static void stop(Process process) throws IOException, InterruptedException {
        boolean ended = false;
        try {
            process.getOutputStream().close();
            ended = process.waitFor(30, TimeUnit.SECONDS);
        } finally {
            if (!ended) {
                process.destroyForcibly();
            }
        }
    }

    /**
     * The worker's JVM.
     *
     * @param args JDBC URL, user, password (empty for none), schema, queue, {@link Kind}, the
     *     {@code PoolingMode} of the URL, and the database's own URL (to listen on)
     */
    public static void main(String[] args) throws Exception {
        String queueName = args[4];
        Kind kind = Kind.valueOf(args[5]);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        CountDownLatch listening = new CountDownLatch(1);
        LocksmithObserver observer = countingDownOnListening(listening);
        try (HikariDataSource pool = pool(args[0], args[1], args[2], 16);
                HikariDataSource direct = pool(args[7], args[1], args[2], 2)) {
            Locksmith locksmith = Locksmith.builder(
                            DSL.using(pool, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false)))
                    .schema(args[3])
                    .poolingMode(PoolingMode.valueOf(args[6]))
                    .observer(observer)
                    .build();
            JobQueue queue = new JobQueue(locksmith);
            Worker worker;
            if (kind == Kind.TRANSACTIONAL) {
                worker = TransactionalWorker.builder(
                                queue, queueName, (jobs, tx) -> jobs.forEach(j -> started(out, j.id())))
                        .build();
            } else {
                JobWorker.Builder b = JobWorker.builder(queue, queueName, (job, tx) -> started(out, job.id()));
                switch (kind) {
                    case POLL -> b.listen(false);
                    case FIXED_POLL -> b.listen(false).minPollInterval(Duration.ofSeconds(1));
                    case LISTEN_VIA -> b.listenVia(direct);
                    default -> {}
                }
                worker = b.build();
            }
            boolean listens = kind != Kind.POLL && kind != Kind.FIXED_POLL;
            try (Worker running = worker.start()) {
                if (listens && !listening.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the worker's LISTEN did not come up within 30 s");
                }
                synchronized (out) {
                    out.println("ready");
                    out.flush();
                }
                // until the bench closes our standard input
                while (System.in.read() >= 0) {
                    // nothing is written to it
                }
            }
        }
    }

    /** An observer that counts {@code listening} down once a worker's LISTEN is up. */
    static LocksmithObserver countingDownOnListening(CountDownLatch listening) {
        return new LocksmithObserver() {
            @Override
            public void workerEvent(WorkerEvent event, String queue) {
                if (event == WorkerEvent.LISTENING) {
                    listening.countDown();
                }
            }
        };
    }

    private static HikariDataSource pool(String url, String user, String password, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        if (!password.isEmpty()) {
            config.setPassword(password);
        }
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName("other-jvm-worker");
        return new HikariDataSource(config);
    }

    private static void started(PrintStream out, long id) {
        long now = System.nanoTime();
        synchronized (out) {
            out.println(id + " " + now);
            out.flush();
        }
    }
}
