package dev.locksmith.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.conf.Settings;
import org.jooq.conf.StatementType;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The dashboard's reads of the job history do the same work with 10^5 rows of history as with
 * 10^3: each statement a page or the queues' panel runs is captured, then run again under
 * {@code EXPLAIN (ANALYZE)}, and the rows its plan reads from the history's partitions (rows
 * returned by scans of job_history partitions, plus rows those scans removed by filter) are
 * summed. Outcomes, not timings: row counts.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardHistoryCostTest {

    private static final int DAYS = 10;
    private static final int PAGE = 50;
    private static final Pattern NODE = Pattern.compile("on (job_history\\w*).*rows=(\\d+) loops=(\\d+)");
    private static final Pattern REMOVED = Pattern.compile("Rows Removed by (?:Filter|Index Recheck): (\\d+)");

    private TestDatabase db;
    private long someHistoryId;

    @BeforeAll
    void historyOfTenDays() {
        db = TestDatabase.migrated("history-cost", "locksmith", 4);
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        for (int i = DAYS - 1; i >= 0; i--) {
            LocalDate day = today.minusDays(i);
            db.dsl.execute(
                    "CREATE TABLE locksmith."
                            + DSL.name("job_history_p" + day.toString().replace("-", ""))
                            + " PARTITION OF locksmith.job_history FOR VALUES FROM (?::timestamptz) TO (?::timestamptz)",
                    day + " 00:00:00+00",
                    day.plusDays(1) + " 00:00:00+00");
        }
        // the last hour: 1,000 rows in two queues, whatever else the history holds
        db.dsl.execute("INSERT INTO locksmith.job_history (id, queue, kind, run_at, status, finished_at) "
                + "SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, 'k', now(), "
                + "CASE WHEN i % 100 = 0 THEN 'cancelled' WHEN i % 10 = 0 THEN 'failed' ELSE 'done' END, "
                + "now() - (i % 3000) * interval '1 second' FROM generate_series(1, 1000) i");
        addOlderRows(1_001, 1_000);
        someHistoryId = 1_500;
    }

    /**
     * {@code n} rows from id {@code first} on, finished over the last ten days but not the last
     * hour: from 01:00 of the oldest day's partition to two hours ago, whatever the time of day.
     * (Spread over a fixed span back from now instead, the oldest partition held a sliver of rows
     * late in the day, small enough for PostgreSQL to scan it whole for a job's id, which the test
     * then counted: 226 rows at 22:30 UTC.)
     */
    private void addOlderRows(long first, int n) {
        OffsetDateTime oldest = LocalDate.now(ZoneOffset.UTC)
                .minusDays(DAYS - 1)
                .atStartOfDay()
                .atOffset(ZoneOffset.UTC)
                .plusHours(1);
        long minutes = Duration.between(
                        oldest, OffsetDateTime.now(ZoneOffset.UTC).minusHours(2))
                .toMinutes();
        db.dsl.execute(
                "INSERT INTO locksmith.job_history (id, queue, kind, run_at, status, finished_at) "
                        + "SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, 'k', now(), "
                        + "CASE WHEN i % 100 = 0 THEN 'cancelled' WHEN i % 10 = 0 THEN 'failed' ELSE 'done' END, "
                        + "now() - interval '2 hours' - (i % ?) * interval '1 minute' "
                        + "FROM generate_series(?::bigint, ?::bigint) i",
                minutes, first, first + n - 1);
        db.dsl.execute("ANALYZE locksmith.job_history");
    }

    @AfterAll
    void close() {
        db.close();
    }

    /** Every read a request of the pages below makes, each with the history rows its plan reads. */
    private Map<String, Long> historyRowsRead() {
        Map<String, Long> result = new LinkedHashMap<>();
        read(result, "jobs, first page", tx -> JobsPage.read(tx, filter(null, null, null), PAGE));
        read(result, "jobs, failed", tx -> JobsPage.read(tx, filter(null, "failed", null), PAGE));
        read(result, "jobs, queue a done", tx -> JobsPage.read(tx, filter("a", "done", null), PAGE));
        // Queue a has jobs of every status. Known limit, not asserted here: a queue that has none
        // of a status other queues have many of (queue b has no failed jobs) can make PostgreSQL
        // read that status on (status, id) and filter the queue, reading the day's rows of that
        // status (measured: 18,060 rows at 200,000 rows of history).
        read(result, "jobs, queue a", tx -> JobsPage.read(tx, filter("a", null, null), PAGE));
        read(result, "jobs, older than 900", tx -> JobsPage.read(tx, filter(null, null, 900L), PAGE));
        read(result, "one job", tx -> JobPage.read(tx, someHistoryId));
        read(result, "queues", QueuesPage::finished);
        return result;
    }

    private static JobsPage.Filter filter(String queue, String status, Long before) {
        return new JobsPage.Filter(queue, status, null, null, before, null);
    }

    /** Runs {@code request}, then each statement it ran under EXPLAIN ANALYZE. */
    private void read(Map<String, Long> result, String name, Consumer<DSLContext> request) {
        List<String> statements = new ArrayList<>();
        DSLContext capturing =
                DSL.using(db.pool, db.dsl.dialect(), new Settings().withStatementType(StatementType.STATIC_STATEMENT));
        capturing.configuration().set(new DefaultExecuteListenerProvider(new ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                statements.add(ctx.sql());
            }
        }));
        request.accept(capturing);
        assertThat(statements).as(name).isNotEmpty();
        long rows = 0;
        for (String sql : statements) {
            rows += historyRows(db.dsl
                    .fetch("EXPLAIN (ANALYZE, COSTS false, TIMING false) " + sql)
                    .getValues(0, String.class));
        }
        result.put(name, rows);
    }

    /**
     * Rows read from job_history partitions by the plan's scan nodes. A bitmap index scan is not
     * counted: the bitmap heap scan above it reports the same rows (and those its recheck
     * removed), and which of the two plans PostgreSQL picks depends on the hour of the day the
     * test runs at (how many rows today's partition holds).
     */
    static long historyRows(List<String> plan) {
        long rows = 0;
        boolean inHistoryNode = false;
        for (String line : plan) {
            Matcher node = NODE.matcher(line);
            if (line.contains("Bitmap Index Scan")) {
                inHistoryNode = false;
            } else if (node.find()) {
                inHistoryNode = true;
                rows += Long.parseLong(node.group(2)) * Long.parseLong(node.group(3));
            } else if (line.contains("->") || line.contains("(actual")) {
                inHistoryNode = false;
            }
            Matcher removed = REMOVED.matcher(line);
            if (inHistoryNode && removed.find()) {
                rows += Long.parseLong(removed.group(1));
            }
        }
        return rows;
    }

    @Test
    void aBitmapPlanCountsItsRowsOnce() {
        List<String> bitmap = List.of(
                "Append (actual rows=1000 loops=1)",
                "  ->  Bitmap Heap Scan on job_history_p20261127 job_history_1 (actual rows=1000 loops=1)",
                "        Recheck Cond: (finished_at >= (CURRENT_TIMESTAMP - '01:00:00'::interval day to second))",
                "        Rows Removed by Index Recheck: 7",
                "        ->  Bitmap Index Scan on job_history_p20261127_finished_at_idx (actual rows=1000 loops=1)",
                "  ->  Seq Scan on job_history_default job_history_2 (actual rows=0 loops=1)",
                "        Rows Removed by Filter: 3");
        assertThat(historyRows(bitmap)).isEqualTo(1_010);
    }

    @Test
    void pagesReadTheSameRowsOfHistoryAtAHundredTimesItsSize() {
        Map<String, Long> small = historyRowsRead();
        addOlderRows(2_001, 198_000);
        assertThat(db.dsl.fetchCount(DSL.table(DSL.name("locksmith", "job_history"))))
                .isEqualTo(200_000);

        Map<String, Long> large = historyRowsRead();

        assertThat(large.keySet()).isEqualTo(small.keySet());
        for (String read : small.keySet()) {
            // pages: a page of rows per status read and partition at most; the queues' panel: the
            // last hour's rows, the same 1,000 at both sizes
            assertThat(large.get(read))
                    .as(read + " at 200,000 rows (" + small.get(read) + " at 2,000)")
                    .isLessThanOrEqualTo(small.get(read) + (long) DAYS * 3 + PAGE)
                    .isLessThanOrEqualTo(1_200);
        }
        // the queues' panel reads the last hour's 1,000 rows (and a few a plan node may look at
        // beyond them: 1,015 seen once), not the 199,000 older ones
        assertThat(large.get("queues")).isBetween(1_000L, 1_100L);
    }
}
