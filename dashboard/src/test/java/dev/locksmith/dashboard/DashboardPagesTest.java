package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNTS;
import static dev.locksmith.codegen.Tables.CHANNEL_ACCOUNT_LEASES;
import static dev.locksmith.codegen.Tables.DEADLOCK_EVENT;
import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.JOB_CONCURRENCY_LIMITS;
import static dev.locksmith.codegen.Tables.JOB_HISTORY;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;
import static dev.locksmith.codegen.Tables.SCHEDULES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.Trigger;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every page and action through the JDK server against a real PostgreSQL, in a schema of its own
 * ({@code ops}): status codes, escaping, pagination, the read-only switch, the CSRF check and
 * basic authentication.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardPagesTest {

    private static final String SCRIPT = "<script>alert(1)</script>";
    private static final String IMG = "<img src=x onerror=alert(1)>";

    private TestDatabase db;
    private DSLContext dsl;
    private JobQueue queue;
    private Dashboard readOnly;
    private Dashboard actions;
    private Http ro;
    private Http rw;

    @BeforeAll
    void start() {
        db = TestDatabase.migrated("pages", "ops", 10);
        dsl = Locksmith.builder(db.dsl).schema("ops").build().dsl();
        queue = new JobQueue(dsl);
        readOnly = Dashboard.builder(DashboardConfig.builder(
                                Locksmith.builder(db.dsl).schema("ops").build())
                        .pageSize(50)
                        .build())
                .port(0)
                .start();
        actions = Dashboard.builder(DashboardConfig.builder(dsl)
                        .readOnly(false)
                        .title("orders")
                        .build())
                .port(0)
                .path("/ops/locksmith")
                .start();
        ro = new Http(readOnly.uri());
        rw = new Http(actions.uri());
    }

    @AfterAll
    void stop() {
        if (readOnly != null) {
            readOnly.close();
        }
        if (actions != null) {
            actions.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @BeforeEach
    void empty() {
        dsl.deleteFrom(JOBS).execute();
        dsl.deleteFrom(JOB_HISTORY).execute();
        dsl.deleteFrom(JOB_CONCURRENCY_LIMITS).execute();
    }

    private long failedJob(String payloadJson, String error) {
        long id = queue.enqueue(
                dsl,
                NewJob.builder("bounces", "send")
                        .payload(payloadJson)
                        .maxAttempts(1)
                        .build());
        Job leased =
                queue.claim("bounces", 1, Duration.ofMinutes(1), "worker-1").get(0);
        assertThat(leased.id()).isEqualTo(id);
        queue.fail(dsl, leased, error);
        return id;
    }

    @Test
    void listensOnLoopbackByDefaultUnderItsPath() {
        assertThat(readOnly.uri().getHost()).isEqualTo("127.0.0.1");
        assertThat(actions.uri().getPath()).isEqualTo("/ops/locksmith/");
        assertThat(rw.get("/").body()).contains("href=\"/ops/locksmith/jobs\"", "<title>Queues · orders</title>");
        HttpResponse<String> bare = new Http(actions.uri().resolve("/")).get("/ops/locksmith");
        assertThat(bare.statusCode()).isEqualTo(303);
        assertThat(bare.headers().firstValue("Location")).contains("/ops/locksmith/");
    }

    @Test
    void everyPageAnswersWithSecurityHeaders() {
        long id = failedJob("{}", "boom");
        for (String path : List.of(
                "/", "/jobs", "/jobs?status=failed&queue=mail", "/jobs/" + id, "/schedules", "/pool", "/locks")) {
            HttpResponse<String> page = ro.get(path);
            assertThat(page.statusCode()).as(path).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).as(path).contains("text/html; charset=utf-8");
            assertThat(page.headers().firstValue("Content-Security-Policy"))
                    .as(path)
                    .hasValueSatisfying(csp -> assertThat(csp).contains("script-src 'self'"));
            assertThat(page.headers().firstValue("X-Frame-Options")).contains("DENY");
            assertThat(page.body()).as(path).contains("<!DOCTYPE html>").doesNotContain("Reading ");
        }
        assertThat(ro.get("/assets/dashboard.js").headers().firstValue("Content-Type"))
                .contains("text/javascript; charset=utf-8");
        assertThat(ro.get("/assets/dashboard.css").statusCode()).isEqualTo(200);
        assertThat(ro.get("/nothing").statusCode()).isEqualTo(404);
        assertThat(ro.get("/jobs/" + (id + 1000)).statusCode()).isEqualTo(404);
        assertThat(ro.get("/jobs?status=weird").statusCode()).isEqualTo(400);
        assertThat(ro.get("/jobs?before=abc").statusCode()).isEqualTo(400);
        assertThat(ro.method("PUT", "/jobs").statusCode()).isEqualTo(405);
        assertThat(ro.post("/jobs", "a=b").statusCode()).isEqualTo(405);
    }

    @Test
    void payloadsErrorsAndNamesAreEscapedEverywhere() {
        long id = failedJob("{\"html\": \"" + SCRIPT + "\"}", IMG + "\n\tat com.example.Mailer.send(Mailer.java:42)");
        queue.enqueue(
                dsl, NewJob.builder("<b>queue</b>", "k\"ind").uniqueKey("'key'").build());

        String job = ro.get("/jobs/" + id).body();
        assertThat(job)
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                .contains("&lt;img src=x onerror=alert(1)&gt;")
                .contains("at com.example.Mailer.send(Mailer.java:42)")
                .doesNotContain(SCRIPT)
                .doesNotContain(IMG);
        String list = ro.get("/jobs").body();
        assertThat(list)
                .contains(
                        "&lt;b&gt;queue&lt;/b&gt;", "k&quot;ind", "&#39;key&#39;", "&lt;img src=x onerror=alert(1)&gt;")
                .doesNotContain("<b>queue</b>")
                .doesNotContain(IMG);
        String queues = ro.get("/").body();
        assertThat(queues)
                .contains("&lt;b&gt;queue&lt;/b&gt;", "queue=%3Cb%3Equeue%3C%2Fb%3E")
                .doesNotContain("<b>queue");
        // A filter value is echoed escaped, never as markup.
        assertThat(ro.get("/jobs?kind=%22%3E%3Cscript%3E").body())
                .contains("value=\"&quot;&gt;&lt;script&gt;\"")
                .doesNotContain("\"><script>");
    }

    @Test
    void jobListsPageByKeysetAndFilter() {
        List<NewJob> batch = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            batch.add(NewJob.builder(i % 2 == 0 ? "even" : "odd", "k" + (i % 3)).build());
        }
        List<Long> ids = queue.enqueueAll(dsl, batch);

        String first = ro.get("/jobs").body();
        assertThat(rows(first)).hasSize(50).startsWith(ids.get(119)).endsWith(ids.get(70));
        String olderLink = link(first, "next");
        String second = ro.get(olderLink.replace("&amp;", "&")).body();
        assertThat(rows(second)).hasSize(50).startsWith(ids.get(69)).endsWith(ids.get(20));
        String third = ro.get(link(second, "next").replace("&amp;", "&")).body();
        assertThat(rows(third)).hasSize(20).endsWith(ids.get(0));
        assertThat(third).doesNotContain("id=\"older\"");
        String back = ro.get(link(third, "prev").replace("&amp;", "&")).body();
        assertThat(rows(back)).isEqualTo(rows(second));

        List<Long> even = rows(ro.get("/jobs?queue=even&kind=k0").body());
        assertThat(even)
                .hasSize(20)
                .allSatisfy(jobId -> assertThat(ids.indexOf(jobId) % 6).isZero());
        assertThat(rows(ro.get("/jobs?queue=even&status=failed").body())).isEmpty();

        String fragment = ro.get("/jobs?queue=odd", "X-Locksmith-Fragment", "1").body();
        assertThat(fragment).doesNotContain("<html").contains("<table class=\"jobs\">");
        assertThat(rows(fragment)).hasSize(50);
    }

    @Test
    void queuesPageCountsPendingRunningAndRecentlyFinished() {
        queue.enqueueAll(dsl, List.of(NewJob.of("mail", "a"), NewJob.of("mail", "b"), NewJob.of("mail", "c")));
        failedJob("{}", "boom");
        queue.claim("mail", 1, Duration.ofMinutes(5), "w");
        String page = ro.get("/").body();
        assertThat(number(page, "total-pending")).isEqualTo("2");
        assertThat(number(page, "total-running")).isEqualTo("1");
        assertThat(number(page, "total-failed")).isEqualTo("1");
        assertThat(page).contains("<svg class=\"chart\"", "1 failed</title>");
    }

    @Test
    void queuesPageShowsTheConcurrencyLimitsAndWhatTheyHoldBack() {
        assertThat(ro.get("/").body()).contains("id=\"no-concurrency-limits\"");
        queue.concurrencyLimits().setDefault(dsl, "tenants", 1);
        queue.concurrencyLimits().set(dsl, "tenants", "t-big", 2);
        // a rate of its own is not a limit of running jobs of its own
        queue.rateLimits().set(dsl, "tenants", "t-rated", 5, Duration.ofSeconds(1));
        queue.rateLimits().setDefault(dsl, "tenants", 100, Duration.ofMinutes(1));
        queue.enqueueAll(
                dsl,
                List.of(
                        NewJob.builder("tenants", "a").concurrencyKey("t-1").build(),
                        NewJob.builder("tenants", "b").concurrencyKey("t-1").build(),
                        NewJob.builder("tenants", "c").concurrencyKey("t-1").build(),
                        NewJob.builder("tenants", "d").concurrencyKey("t-2").build(),
                        NewJob.builder("tenants", "e").concurrencyKey("t-2").build()));
        assertThat(queue.claim("tenants", 10, Duration.ofMinutes(5), "w")).hasSize(2);
        String page = ro.get("/").body();
        assertThat(page)
                .contains("id=\"concurrency-limits\"")
                .contains("<tr><td>tenants</td><td class=\"num\">1</td><td class=\"num\">1</td>"
                        + "<td>100 per 1 min 0 s</td><td class=\"num\">2</td><td class=\"num\">3</td>"
                        + "<td>t-1 (2), t-2 (1)</td></tr>");
    }

    @Test
    void readOnlyRefusesActionsAndOffersNone() {
        long id = failedJob("{}", "boom");
        assertThat(ro.get("/jobs/" + id).body()).contains("Read-only dashboard").doesNotContain("action-retry");
        assertThat(ro.get("/jobs/" + id + "/retry").statusCode()).isEqualTo(403);
        HttpResponse<String> post = ro.post("/jobs/" + id + "/retry", "csrf=x");
        assertThat(post.statusCode()).isEqualTo(403);
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.FAILED);
    }

    @Test
    void retryCancelAndDeleteNeedTheTokenTwiceAndRunOnce() {
        long id = failedJob("{}", "boom");
        String path = "/jobs/" + id + "/retry";
        assertThat(rw.get("/jobs/" + id).body())
                .contains("id=\"action-retry\"", "id=\"action-delete\"")
                .doesNotContain("action-cancel");
        HttpResponse<String> confirm = rw.get(path);
        assertThat(confirm.statusCode()).isEqualTo(200);
        String token = Http.csrf(confirm.body());
        String cookie = Http.cookie(confirm);
        assertThat(cookie).isEqualTo(DashboardApp.CSRF_COOKIE + "=" + token);
        assertThat(confirm.headers().firstValue("Set-Cookie"))
                .hasValueSatisfying(c -> assertThat(c).contains("SameSite=Strict", "HttpOnly", "Path=/ops/locksmith"));

        assertThat(rw.post(path, "").statusCode()).as("no token").isEqualTo(403);
        assertThat(rw.post(path, "csrf=" + token).statusCode()).as("no cookie").isEqualTo(403);
        assertThat(rw.post(path, "csrf=wrong", "Cookie", cookie).statusCode())
                .as("wrong token")
                .isEqualTo(403);
        assertThat(rw.post(path, "csrf=" + token, "Cookie", DashboardApp.CSRF_COOKIE + "=wrong")
                        .statusCode())
                .as("wrong cookie")
                .isEqualTo(403);
        assertThat(rw.post(path, "csrf=" + token, "Cookie", cookie, "Origin", "https://evil.example")
                        .statusCode())
                .as("foreign origin")
                .isEqualTo(403);
        assertThat(rw.post(path, "csrf=" + token, "Cookie", cookie, "Sec-Fetch-Site", "cross-site")
                        .statusCode())
                .as("cross-site fetch")
                .isEqualTo(403);
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.FAILED);

        HttpResponse<String> retried =
                rw.post(path, "csrf=" + token, "Cookie", cookie, "Origin", "http://127.0.0.1:" + actions.port());
        assertThat(retried.statusCode()).isEqualTo(303);
        assertThat(retried.headers().firstValue("Location"))
                .contains("/ops/locksmith/jobs/" + id + "?action=retry&result=applied");
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.PENDING);
        assertThat(rw.get("/jobs/" + id + "?action=retry&result=applied").body())
                .contains("Job " + id + " retried.");

        HttpResponse<String> again = rw.post(path, "csrf=" + token, "Cookie", cookie);
        assertThat(again.headers().firstValue("Location"))
                .hasValueSatisfying(l -> assertThat(l).endsWith("result=not_applied"));
        assertThat(rw.get("/jobs/" + id + "/retry").body()).contains("A pending job cannot be retried");

        assertThat(rw.post("/jobs/" + id + "/cancel", "csrf=" + token, "Cookie", cookie)
                        .statusCode())
                .isEqualTo(303);
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
        assertThat(rw.post("/jobs/" + id + "/delete", "csrf=" + token, "Cookie", cookie)
                        .statusCode())
                .isEqualTo(303);
        assertThat(queue.find(dsl, id)).isEmpty();
        assertThat(rw.get("/jobs/" + id).statusCode()).isEqualTo(404);
        assertThat(rw.post("/jobs/" + id + "/explode", "csrf=" + token, "Cookie", cookie)
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void retryOfAJobWhoseUniqueKeyIsTakenChangesNothing() {
        long id = queue.enqueue(
                dsl,
                NewJob.builder("mail", "send")
                        .uniqueKey("order-1")
                        .maxAttempts(1)
                        .build());
        queue.fail(dsl, queue.claim("mail", 1, Duration.ofMinutes(1), "w").get(0), "boom");
        queue.enqueue(dsl, NewJob.builder("mail", "send").uniqueKey("order-1").build());
        HttpResponse<String> confirm = rw.get("/jobs/" + id + "/retry");
        HttpResponse<String> post =
                rw.post("/jobs/" + id + "/retry", "csrf=" + Http.csrf(confirm.body()), "Cookie", Http.cookie(confirm));
        assertThat(post.headers().firstValue("Location"))
                .hasValueSatisfying(l -> assertThat(l).endsWith("result=unique_key_taken"));
        assertThat(queue.find(dsl, id).orElseThrow().status()).isEqualTo(JobStatus.FAILED);
    }

    @Test
    void basicAuthenticationGuardsEveryPage() {
        try (Dashboard guarded = Dashboard.builder(DashboardConfig.builder(dsl).build())
                .port(0)
                .basicAuth("ops", "s3cret")
                .start()) {
            Http http = new Http(guarded.uri());
            assertThat(http.get("/").statusCode()).isEqualTo(401);
            assertThat(http.get("/assets/dashboard.css").statusCode()).isEqualTo(401);
            String wrong = "Basic " + java.util.Base64.getEncoder().encodeToString("ops:nope".getBytes());
            assertThat(http.get("/", "Authorization", wrong).statusCode()).isEqualTo(401);
            String right = "Basic " + java.util.Base64.getEncoder().encodeToString("ops:s3cret".getBytes());
            HttpResponse<String> page = http.get("/", "Authorization", right);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("· ops");
        }
        assertThatThrownBy(() ->
                        Dashboard.builder(DashboardConfig.builder(dsl).build()).basicAuth("a:b", "x"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void schedulesPoolAndAuditHistoryShowTheirRows() {
        new Schedules(dsl)
                .register(
                        dsl,
                        Schedule.builder(
                                        "nightly <report>",
                                        Trigger.every(Duration.ofMinutes(5)),
                                        NewJob.of("reports", "run"))
                                .build());
        assertThat(ro.get("/schedules").body()).contains("nightly &lt;report&gt;", "every 5 min 0 s", "in ");

        ChannelAccountPool pool = new ChannelAccountPool(dsl);
        pool.register(dsl, List.of("GA1", "GA2", "GA3"));
        pool.acquire(Duration.ofMinutes(5), "sender-<7>").orElseThrow();
        String poolPage = ro.get("/pool").body();
        assertThat(number(poolPage, "pool-idle")).isEqualTo("2");
        assertThat(number(poolPage, "pool-leased")).isEqualTo("1");
        assertThat(number(poolPage, "pool-expired")).isEqualTo("0");
        assertThat(poolPage).contains("sender-&lt;7&gt;");

        OffsetDateTime now = OffsetDateTime.now();
        dsl.insertInto(LOCK_WAIT_EVENT)
                .set(LOCK_WAIT_EVENT.WAITER_TXN_ID, UUID.randomUUID())
                .set(LOCK_WAIT_EVENT.HOLDER_TXN_ID, UUID.randomUUID())
                .set(LOCK_WAIT_EVENT.RESOURCE_ID, "accounts:" + SCRIPT)
                .set(LOCK_WAIT_EVENT.WAIT_START, now.minusSeconds(3))
                .set(LOCK_WAIT_EVENT.WAIT_END, now)
                .set(LOCK_WAIT_EVENT.OUTCOME, "timeout")
                .execute();
        dsl.insertInto(DEADLOCK_EVENT)
                .set(DEADLOCK_EVENT.TXN_IDS, JSONB.valueOf("[\"a\", \"b\"]"))
                .set(DEADLOCK_EVENT.DETAIL, "Process 1 waits for " + IMG)
                .execute();
        String locks = ro.get("/locks").body();
        assertThat(locks)
                .contains("accounts:&lt;script&gt;alert(1)&lt;/script&gt;", "3.0 s", "Process 1 waits for &lt;img")
                .contains("No session is waiting for a lock.")
                .doesNotContain(SCRIPT)
                .doesNotContain(IMG);
        dsl.deleteFrom(LOCK_WAIT_EVENT).execute();
        dsl.deleteFrom(DEADLOCK_EVENT).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNT_LEASES).execute();
        dsl.deleteFrom(CHANNEL_ACCOUNTS).execute();
        dsl.deleteFrom(SCHEDULES).execute();
    }

    @Test
    void theLocksPageListsWhatHoldsTheHorizonBackEscaped() throws Exception {
        assertThat(ro.get("/locks").body()).contains("id=\"no-horizon-holders\"");
        try (Connection held = db.pool.getConnection()) {
            held.setClientInfo("ApplicationName", "report " + SCRIPT);
            held.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            held.setAutoCommit(false);
            int pid;
            try (Statement s = held.createStatement();
                    ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
                r.next();
                pid = r.getInt(1);
            }
            String locks = ro.get("/locks").body();
            assertThat(locks)
                    .contains("id=\"horizon-holders\"", "session pid " + pid + " ", "idle in transaction")
                    .contains("application report &lt;script&gt;alert(1)&lt;/script&gt;")
                    .doesNotContain(SCRIPT)
                    .doesNotContain("no-horizon-holders");
            held.rollback();
        }
    }

    @Test
    void aMissingModuleIsSaidNotFailed() {
        try (TestDatabase other = TestDatabase.migrated("nopool", "locksmith", 2)) {
            other.dsl.execute("DROP TABLE locksmith.channel_accounts");
            try (Dashboard d = Dashboard.builder(
                            DashboardConfig.builder(other.dsl).build())
                    .port(0)
                    .start()) {
                HttpResponse<String> page = new Http(d.uri()).get("/pool");
                assertThat(page.statusCode()).isEqualTo(200);
                assertThat(page.body())
                        .contains("No channel accounts here: its table is not in schema <code>locksmith</code>");
            }
        }
    }

    private static List<Long> rows(String html) {
        Matcher m = Pattern.compile("<tr><td class=\"num\"><a href=\"[^\"]*/jobs/(\\d+)\">")
                .matcher(html);
        List<Long> ids = new ArrayList<>();
        while (m.find()) {
            ids.add(Long.parseLong(m.group(1)));
        }
        return ids;
    }

    private static String link(String html, String rel) {
        Matcher m = Pattern.compile("rel=\"" + rel + "\"[^>]*href=\"([^\"]*)\"").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no " + rel + " link in " + html);
        }
        return m.group(1);
    }

    private static String number(String html, String id) {
        Matcher m = Pattern.compile("id=\"" + id + "\">([^<]*)<").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no #" + id + " in " + html);
        }
        return m.group(1);
    }
}
