package dev.locksmith.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobQueueConfig;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.pool.ChannelAccountPool;
import dev.locksmith.schedules.Schedule;
import dev.locksmith.schedules.Schedules;
import dev.locksmith.schedules.Trigger;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser: headless Chromium, driven by Selenium through the machine's
 * chromedriver (never a downloaded one). While workers drain a queue, the queue page's counts
 * change without a reload; a failed job's page shows its payload as text, and a retry through the
 * confirmation page makes it pending; the locks page draws the blocking graph while this test
 * holds a lock another session waits for. Screenshots go to {@code target/screenshots}.
 *
 * <p>Skipped, with the reason, when no Chromium or chromedriver is found; with
 * {@code LOCKSMITH_REQUIRE_BROWSER=1} (CI) that fails instead.
 */
class DashboardBrowserTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void anOperatorWatchesQueuesRetriesAFailedJobAndSeesWhoBlocksWhom() throws Exception {
        Path chromium = executable("locksmith.chromium", "chromium", "chromium-browser", "google-chrome");
        Path chromedriver = executable("locksmith.chromedriver", "chromedriver", "/usr/lib/chromium/chromedriver");
        if (chromium == null || chromedriver == null) {
            String why = "no headless browser: " + (chromium == null ? "chromium " : "")
                    + (chromedriver == null ? "chromedriver " : "")
                    + "not found (apt-get install chromium chromium-driver, or -Dlocksmith.chromium / -Dlocksmith.chromedriver)";
            if ("1".equals(System.getenv("LOCKSMITH_REQUIRE_BROWSER"))) {
                fail(why + "; LOCKSMITH_REQUIRE_BROWSER=1 says this run must have one");
            }
            assumeTrue(false, why);
        }
        Path screenshots = Path.of(System.getProperty("locksmith.screenshots", "target/screenshots"));
        Files.createDirectories(screenshots);

        try (TestDatabase db = TestDatabase.migrated("browser", "locksmith", 16)) {
            JobQueue queue = new JobQueue(
                    db.dsl, JobQueueConfig.builder().keepCompleted(true).build());
            long failed = failedJob(queue, db);
            seed(queue, db);
            DashboardConfig config = DashboardConfig.builder(db.dsl)
                    .readOnly(false)
                    .refreshInterval(Duration.ofMillis(500))
                    .title("orders-service")
                    .build();
            ChromeDriverService service = new ChromeDriverService.Builder()
                    .usingDriverExecutable(chromedriver.toFile())
                    .usingAnyFreePort()
                    .build();
            ChromeOptions options = new ChromeOptions()
                    .setBinary(chromium.toFile())
                    .addArguments(
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-dev-shm-usage",
                            "--disable-gpu",
                            "--window-size=1280,1000",
                            "--lang=en-US");
            try (Dashboard dashboard = Dashboard.builder(config).port(0).start()) {
                WebDriver browser = new ChromeDriver(service, options);
                try {
                    WebDriverWait wait = new WebDriverWait(browser, WAIT);
                    wait.ignoring(StaleElementReferenceException.class);
                    String base = dashboard.uri().toString();

                    // 1. Queues: counts change under a running workload, without a reload.
                    browser.get(base);
                    String pendingBefore = text(browser, "total-pending");
                    String doneBefore = text(browser, "total-done");
                    assertThat(pendingBefore).isEqualTo("300");
                    ((JavascriptExecutor) browser).executeScript("window.notReloaded = true;");
                    CountDownLatch drained = new CountDownLatch(300);
                    // The test lets jobs through in two steps, so that the page shows the counts
                    // part-way through the drain, whatever the machine's speed.
                    Semaphore letThrough = new Semaphore(100);
                    try (JobWorker worker = JobWorker.builder(
                                    new JobQueue(
                                            Locksmith.of(db.pool),
                                            JobQueueConfig.builder()
                                                    .keepCompleted(true)
                                                    .build()),
                                    "emails",
                                    (job, tx) -> {
                                        if (!letThrough.tryAcquire(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                                            throw new IllegalStateException("the test did not let the job through");
                                        }
                                        drained.countDown();
                                    })
                            .threads(3)
                            .build()
                            .start()) {
                        wait.until(d -> !text(d, "total-done").equals(doneBefore)
                                && !text(d, "total-pending").equals(pendingBefore));
                        assertThat(((JavascriptExecutor) browser).executeScript("return window.notReloaded === true;"))
                                .isEqualTo(true);
                        letThrough.release(200);
                        assertThat(drained.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                                .isTrue();
                    }
                    wait.until(d -> text(d, "total-pending").equals("0")
                            && text(d, "total-done").equals("300"));
                    shot(browser, screenshots, "queues");

                    // 2. A failed job: payload as text, last error with its stack trace; retry it.
                    browser.get(base + "jobs?queue=billing&status=failed");
                    shot(browser, screenshots, "jobs");
                    click(wait, By.linkText(Long.toString(failed)));
                    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("payload")));
                    assertThat(text(browser, "payload")).contains("<script>alert(1)</script>");
                    assertThat(text(browser, "last-error"))
                            .contains("IllegalStateException: card declined <img src=x onerror=alert(1)>")
                            .contains("at dev.locksmith.dashboard.DashboardBrowserTest");
                    assertThat(browser.findElements(By.cssSelector("#payload script")))
                            .isEmpty();
                    shot(browser, screenshots, "job");
                    click(wait, By.id("action-retry"));
                    wait.until(ExpectedConditions.elementToBeClickable(By.id("confirm")))
                            .click();
                    wait.until(ExpectedConditions.textToBe(By.id("job-status"), "pending"));
                    assertThat(browser.findElement(By.id("flash")).getText()).isEqualTo("Job " + failed + " retried.");
                    assertThat(queue.find(db.dsl, failed).orElseThrow().status())
                            .isEqualTo(JobStatus.PENDING);

                    // 3. Schedules and pool.
                    browser.get(base + "schedules");
                    assertThat(text(browser, "live")).contains("nightly-report");
                    shot(browser, screenshots, "schedules");
                    browser.get(base + "pool");
                    assertThat(text(browser, "pool-leased")).isEqualTo("2");
                    shot(browser, screenshots, "pool");

                    // 4. Locks: the graph shows the session this test makes wait, under its holder.
                    browser.get(base + "locks");
                    assertThat(browser.findElements(By.id("no-blocking"))).hasSize(1);
                    ExecutorService waiter = Executors.newSingleThreadExecutor();
                    try (Connection holder = db.pool.getConnection();
                            Connection blocked = db.pool.getConnection()) {
                        holder.setAutoCommit(false);
                        blocked.setAutoCommit(false);
                        int holderPid = pid(holder);
                        int blockedPid = pid(blocked);
                        try (Statement s = holder.createStatement()) {
                            s.execute(
                                    "UPDATE locksmith.channel_accounts SET updated_at = now() WHERE public_key = 'GA-0001'");
                        }
                        Future<?> waiting = waiter.submit(() -> {
                            try (Statement s = blocked.createStatement()) {
                                s.execute("SELECT set_config('lock_timeout', '30s', true)");
                                s.execute(
                                        "UPDATE locksmith.channel_accounts SET updated_at = updated_at WHERE public_key = 'GA-0001'");
                            }
                            return null;
                        });
                        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("blocking-graph")));
                        String graph = wait.until(d -> {
                            String text = text(d, "live");
                            return text.contains("pid " + blockedPid) ? text : null;
                        });
                        assertThat(graph)
                                .contains("pid " + holderPid, "idle in transaction", "channel_accounts")
                                .contains("waits", "transactionid ShareLock");
                        // The waiter is drawn beneath its holder (read again if a refresh replaced them).
                        By holderNode = By.cssSelector(".node.holder[data-pid='" + holderPid + "']");
                        By waiterNode = By.cssSelector(".node.holder[data-pid='" + holderPid
                                + "'] + ul .node.waiter[data-pid='" + blockedPid + "']");
                        wait.until(d -> d.findElement(holderNode).isDisplayed()
                                && d.findElement(waiterNode).isDisplayed());
                        shot(browser, screenshots, "locks");
                        holder.rollback();
                        waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                        blocked.rollback();
                    } finally {
                        waiter.shutdownNow();
                    }
                } finally {
                    browser.quit();
                }
            }
        }
    }

    /** A billing job that failed for good, with a payload and an error that are markup. */
    private static long failedJob(JobQueue queue, TestDatabase db) {
        long id = queue.enqueue(
                db.dsl,
                NewJob.builder("billing", "charge-card")
                        .payload("{\"order\": 1042, \"note\": \"<script>alert(1)</script>\"}")
                        .maxAttempts(1)
                        .build());
        Job leased = queue.claim("billing", 1, Duration.ofMinutes(1), "billing-worker-1")
                .get(0);
        StringWriter trace = new StringWriter();
        new IllegalStateException("card declined <img src=x onerror=alert(1)>").printStackTrace(new PrintWriter(trace));
        queue.fail(db.dsl, leased, trace.toString());
        return id;
    }

    /** 300 pending emails, a schedule, and a pool of five accounts of which two are leased. */
    private static void seed(JobQueue queue, TestDatabase db) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            jobs.add(NewJob.builder("emails", "welcome")
                    .payload("{\"user\": " + i + "}")
                    .build());
        }
        queue.enqueueAll(db.dsl, jobs);
        new Schedules(db.dsl)
                .register(
                        db.dsl,
                        Schedule.builder(
                                        "nightly-report",
                                        Trigger.cron("0 2 * * *", "Europe/Berlin"),
                                        NewJob.of("reports", "nightly"))
                                .build());
        ChannelAccountPool pool = new ChannelAccountPool(db.dsl);
        pool.register(db.dsl, List.of("GA-0001", "GA-0002", "GA-0003", "GA-0004", "GA-0005"));
        pool.acquire(Duration.ofMinutes(10), "payouts-1").orElseThrow();
        pool.acquire(Duration.ofMinutes(2), "payouts-2").orElseThrow();
    }

    /**
     * An element's text, read in the page in one step: the live refresh replaces the elements
     * every half second, so a handle found first and read later can be stale.
     */
    private static String text(WebDriver browser, String id) {
        Object text = ((JavascriptExecutor) browser)
                .executeScript("var e = document.getElementById(arguments[0]); return e ? e.innerText : null;", id);
        if (text == null) {
            throw new org.openqa.selenium.NoSuchElementException("#" + id);
        }
        return text.toString();
    }

    /** Clicks an element of the live part, finding it again if a refresh replaced it meanwhile. */
    private static void click(WebDriverWait wait, By by) {
        wait.until(d -> {
            d.findElement(by).click();
            return true;
        });
    }

    private static int pid(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT pg_backend_pid()");
                ResultSet r = s.executeQuery()) {
            r.next();
            return r.getInt(1);
        }
    }

    private static void shot(WebDriver browser, Path dir, String name) throws IOException {
        File file = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(file.toPath(), dir.resolve(name + ".png"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** A system property's path, else the first candidate that is an executable (absolute, or on the PATH). */
    private static Path executable(String property, String... candidates) {
        String given = System.getProperty(property);
        if (given != null && Files.isExecutable(Path.of(given))) {
            return Path.of(given);
        }
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("/usr/bin:/bin");
        for (String candidate : candidates) {
            Stream<Path> places = candidate.startsWith("/")
                    ? Stream.of(Path.of(candidate))
                    : Stream.of(path.split(File.pathSeparator)).map(dir -> Path.of(dir, candidate));
            Optional<Path> found = places.filter(Files::isExecutable).findFirst();
            if (found.isPresent()) {
                return found.get();
            }
        }
        return null;
    }
}
