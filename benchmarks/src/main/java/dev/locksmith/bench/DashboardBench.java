package dev.locksmith.bench;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;

import dev.locksmith.dashboard.Dashboard;
import dev.locksmith.dashboard.DashboardConfig;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.provisioning.ServerSettings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * How long the dashboard's pages take over a table of 100,000 jobs (70% pending in four queues,
 * 20% done and 9% failed within the last hour, 1% running): each page requested 30 times after 5
 * warm-up requests, timed from the request to the last byte on the loopback interface (an upper
 * bound on the server's time). Run with
 * {@code java -cp benchmarks/target/locksmith.jar dev.locksmith.bench.DashboardBench [jobs]}.
 */
public final class DashboardBench {

    private static final int RUNS = 30;
    private static final int WARM_UP = 5;

    private DashboardBench() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("org.jooq.no-logo", "true");
        System.setProperty("org.jooq.no-tips", "true");
        int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        try (BenchSession session = new BenchSession(ServerSettings.fromEnvironment(), 8, "locksmith")) {
            DSLContext dsl = session.dsl();
            long[] ids = seed(dsl, jobs);
            dsl.execute("VACUUM ANALYZE locksmith.jobs"); // as autovacuum keeps a live table: visibility map set,
            // statistics fresh
            System.out.printf(
                    "server: PostgreSQL %s via %s (%s); %,d jobs%n",
                    session.server().version(), session.server().source().description(), session.durability(), jobs);
            try (Dashboard dashboard = Dashboard.builder(
                            DashboardConfig.builder(dsl).build())
                    .port(0)
                    .start()) {
                HttpClient client = HttpClient.newHttpClient();
                long middle = ids[ids.length / 2];
                long failed = dsl.select(DSL.max(JOB_HISTORY.ID))
                        .from(JOB_HISTORY)
                        .where(JOB_HISTORY.STATUS.eq("failed"))
                        .fetchSingle()
                        .value1();
                Map<String, String> pages = new LinkedHashMap<>();
                pages.put("queues overview", "");
                pages.put("jobs, first page", "jobs");
                pages.put("jobs, page at the middle id", "jobs?before=" + middle);
                pages.put("jobs, near the oldest id", "jobs?before=" + (ids[0] + 60));
                pages.put("jobs, queue + pending, middle", "jobs?queue=q2&status=pending&before=" + middle);
                pages.put("jobs, failed only", "jobs?status=failed");
                pages.put("jobs, failed, queue + kind", "jobs?queue=q1&status=failed&kind=k3");
                pages.put("jobs, newer than the middle", "jobs?after=" + middle);
                pages.put("job detail (failed)", "jobs/" + failed);
                pages.put("pool", "pool");
                pages.put("locks", "locks");
                System.out.printf("%-32s %10s %10s %10s%n", "page", "median ms", "p95 ms", "max ms");
                for (Map.Entry<String, String> page : pages.entrySet()) {
                    URI uri = dashboard.uri().resolve(page.getValue());
                    List<Double> millis = new ArrayList<>();
                    for (int i = 0; i < WARM_UP + RUNS; i++) {
                        long start = System.nanoTime();
                        HttpResponse<String> response =
                                client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
                        double ms = (System.nanoTime() - start) / 1e6;
                        if (response.statusCode() != 200 || response.body().contains("class=\"error\"")) {
                            throw new IllegalStateException(uri + " answered " + response.statusCode());
                        }
                        if (i >= WARM_UP) {
                            millis.add(ms);
                        }
                    }
                    millis.sort(Double::compare);
                    System.out.printf(
                            Locale.ROOT,
                            "%-32s %10.1f %10.1f %10.1f%n",
                            page.getKey(),
                            Stats.median(millis),
                            millis.get((int) Math.ceil(0.95 * millis.size()) - 1),
                            Stats.max(millis));
                }
            }
        }
    }

    /** Enqueues {@code n} jobs in batches, then finishes and fails some of them; returns their ids. */
    private static long[] seed(DSLContext dsl, int n) throws IOException {
        JobQueue queue = new JobQueue(dsl);
        long[] ids = new long[n];
        int at = 0;
        while (at < n) {
            List<NewJob> batch = new ArrayList<>();
            for (int i = at; i < Math.min(n, at + 5_000); i++) {
                batch.add(NewJob.builder("q" + (i % 4), "k" + (i % 7))
                        .payload("{\"order\": " + i + "}")
                        .build());
            }
            for (long id : queue.enqueueAll(dsl, batch)) {
                ids[at++] = id;
            }
        }
        dsl.update(JOBS)
                .set(JOBS.STATUS, "done")
                .set(
                        JOBS.FINISHED_AT,
                        DSL.field("now() - random() * interval '55 minutes'", JOBS.FINISHED_AT.getDataType()))
                .where(JOBS.ID.mod(100).lt(20L))
                .execute();
        dsl.update(JOBS)
                .set(JOBS.STATUS, "failed")
                .set(JOBS.ATTEMPTS, JOBS.MAX_ATTEMPTS)
                .set(
                        JOBS.LAST_ERROR,
                        "java.lang.IllegalStateException: boom\n\tat com.example.Handler.handle(Handler.java:1)")
                .set(
                        JOBS.FINISHED_AT,
                        DSL.field("now() - random() * interval '55 minutes'", JOBS.FINISHED_AT.getDataType()))
                .where(JOBS.ID.mod(100).between(20L, 28L))
                .execute();
        // Finished jobs live in the history: move the rows just finished there, as the library's
        // finishing statements do.
        dsl.insertInto(JOB_HISTORY)
                .columns(
                        JOB_HISTORY.ID,
                        JOB_HISTORY.QUEUE,
                        JOB_HISTORY.KIND,
                        JOB_HISTORY.PAYLOAD,
                        JOB_HISTORY.RUN_AT,
                        JOB_HISTORY.STATUS,
                        JOB_HISTORY.ATTEMPTS,
                        JOB_HISTORY.MAX_ATTEMPTS,
                        JOB_HISTORY.LAST_ERROR,
                        JOB_HISTORY.CREATED_AT,
                        JOB_HISTORY.FINISHED_AT)
                .select(DSL.select(
                                JOBS.ID,
                                JOBS.QUEUE,
                                JOBS.KIND,
                                JOBS.PAYLOAD,
                                JOBS.RUN_AT,
                                JOBS.STATUS,
                                JOBS.ATTEMPTS,
                                JOBS.MAX_ATTEMPTS,
                                JOBS.LAST_ERROR,
                                JOBS.CREATED_AT,
                                JOBS.FINISHED_AT)
                        .from(JOBS)
                        .where(JOBS.STATUS.in("done", "failed")))
                .execute();
        dsl.deleteFrom(JOBS).where(JOBS.STATUS.in("done", "failed")).execute();
        dsl.update(JOBS)
                .set(JOBS.STATUS, "running")
                .set(JOBS.LOCKED_BY, "bench-worker")
                .set(JOBS.LEASE_ID, DSL.field("gen_random_uuid()", JOBS.LEASE_ID.getDataType()))
                .set(JOBS.LOCKED_UNTIL, DSL.field("now() + interval '10 minutes'", JOBS.LOCKED_UNTIL.getDataType()))
                .where(JOBS.ID.mod(100).eq(29L))
                .execute();
        return ids;
    }
}
