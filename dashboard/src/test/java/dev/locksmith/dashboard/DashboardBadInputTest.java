package dev.locksmith.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * Hostile query parameters and failing databases through the JDK server: every text parameter a
 * page reads passes one rule (URL-encoded UTF-8, no U+0000, no unpaired surrogate, a length
 * limit) and a value that breaks it is a 400 with a plain message naming the parameter, before
 * any statement runs; a database failure is a generic 500 logged once with its throwable. No
 * page ever shows a database's message, a statement or a stack trace. (The servlet is checked
 * the same way in {@link DashboardServletTest}.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardBadInputTest {

    /** What a database error or a stack trace would put on a page. */
    static final List<String> LEAKS = List.of(
            "SQL [",
            "ERROR:",
            "from \"",
            "division by zero",
            "invalid byte sequence",
            "22021",
            "Exception",
            "\tat ",
            "jobs_data");

    private TestDatabase db;
    private TestDatabase brokenDb;
    private Dashboard dashboard;
    private Dashboard broken;
    private Http http;
    private Http brokenHttp;

    @BeforeAll
    void start() {
        db = TestDatabase.migrated("bad_input", "locksmith", 6);
        new JobQueue(db.dsl).enqueue(db.dsl, NewJob.of("mail", "send"));
        brokenDb = brokenDatabase("bad_input_broken");
        dashboard = Dashboard.builder(DashboardConfig.builder(db.dsl).build())
                .port(0)
                .start();
        broken = Dashboard.builder(DashboardConfig.builder(brokenDb.dsl).build())
                .port(0)
                .start();
        http = new Http(dashboard.uri());
        brokenHttp = new Http(broken.uri());
    }

    @AfterAll
    void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (broken != null) {
            broken.close();
        }
        if (db != null) {
            db.close();
        }
        if (brokenDb != null) {
            brokenDb.close();
        }
    }

    /**
     * A migrated database whose {@code jobs} table is replaced by a view that fails on every read
     * of its one row (division by zero): a database failure with a statement and a message that a
     * page must not show.
     */
    static TestDatabase brokenDatabase(String purpose) {
        TestDatabase broken = TestDatabase.migrated(purpose, "locksmith", 2);
        broken.dsl.execute("INSERT INTO locksmith.jobs (queue, kind) VALUES ('mail', 'send')");
        broken.dsl.execute("ALTER TABLE locksmith.jobs RENAME TO jobs_data");
        broken.dsl.execute("CREATE VIEW locksmith.jobs AS SELECT * FROM locksmith.jobs_data WHERE 1 / (id - id) = 0");
        return broken;
    }

    static Stream<Arguments> hostileParameters() {
        List<Arguments> all = new ArrayList<>();
        for (String[] filter : new String[][] {{"queue", "128"}, {"kind", "128"}, {"key", "256"}}) {
            String name = filter[0];
            int max = Integer.parseInt(filter[1]);
            all.add(Arguments.of(name + "=a%00b", name + " must not contain the NUL character"));
            all.add(Arguments.of(name + "=%00", name + " must not contain the NUL character"));
            // a surrogate encoded on its own (CESU-8), a truncated sequence, an overlong NUL, a stray byte
            all.add(Arguments.of(name + "=k%ED%A0%80", name + " must be URL-encoded UTF-8 text"));
            all.add(Arguments.of(name + "=k%C3", name + " must be URL-encoded UTF-8 text"));
            all.add(Arguments.of(name + "=a%C0%80b", name + " must be URL-encoded UTF-8 text"));
            all.add(Arguments.of(name + "=%FF", name + " must be URL-encoded UTF-8 text"));
            all.add(Arguments.of(name + "=" + "a".repeat(max + 1), name + " must be at most " + max + " characters"));
        }
        for (String other : List.of("status", "before", "after")) {
            all.add(Arguments.of(other + "=1%00", other + " must not contain the NUL character"));
            all.add(Arguments.of(other + "=%ED%B0%80", other + " must be URL-encoded UTF-8 text"));
            all.add(Arguments.of(other + "=" + "1".repeat(257), other + " must be at most 256 characters"));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "/jobs?{0}")
    @MethodSource("hostileParameters")
    void aHostileFilterIsABadRequestWithAPlainMessageAndNoLog(String query, String message) {
        List<ILoggingEvent> logged = logged(() -> {
            for (boolean fragment : new boolean[] {false, true}) {
                HttpResponse<String> page =
                        fragment ? http.get("/jobs?" + query, "X-Locksmith-Fragment", "1") : http.get("/jobs?" + query);
                assertThat(page.statusCode()).as(query).isEqualTo(400);
                assertThat(page.body()).contains("<h1>Bad request</h1>", message);
                assertNoLeak(page.body());
            }
        });
        assertThat(logged).as("log records of a bad request").isEmpty();
    }

    @Test
    void theFlashParametersOfAJobPagePassTheSameRule() {
        HttpResponse<String> page = http.get("/jobs/1?action=retry%00&result=applied");
        assertThat(page.statusCode()).isEqualTo(400);
        assertThat(page.body()).contains("action must not contain the NUL character");
        assertNoLeak(page.body());
    }

    @Test
    void validTextStillFiltersNonAsciiAndPairedSurrogatesIncluded() {
        assertThat(http.get("/jobs?queue=caf%C3%A9%F0%9F%94%92&kind=%E2%9C%89").statusCode())
                .isEqualTo(200);
        assertThat(http.get("/jobs?queue=mail").body()).contains("<td>send</td>");
    }

    @Test
    void theRuleRefusesAnUnpairedSurrogateAndABadEscapeHoweverTheyArrive() {
        // A container may hand over a query with characters as they came; URL decoding never makes a lone surrogate
        assertThatThrownBy(() -> Params.parse("kind=k\uD800").text("kind", 128))
                .isInstanceOf(BadRequest.class)
                .hasMessage("kind must be valid Unicode text (it has an unpaired surrogate)");
        assertThatThrownBy(() -> Params.parse("kind=\uDC00k").text("kind", 128))
                .hasMessage("kind must be valid Unicode text (it has an unpaired surrogate)");
        assertThatThrownBy(() -> Params.parse("queue=%zz").text("queue", 128))
                .hasMessage("queue must be URL-encoded UTF-8 text");
        assertThatThrownBy(() -> Params.parse("queue=a%2").text("queue", 128))
                .hasMessage("queue must be URL-encoded UTF-8 text");
        assertThat(Params.parse("queue=%F0%9F%94%92+x&queue=second").text("queue", 128))
                .isEqualTo("\uD83D\uDD12 x");
        assertThat(Params.parse("other=%00&queue=").text("queue", 128)).isNull();
    }

    @Test
    void aDatabaseFailureIsAGeneric500LoggedOnceWithItsThrowable() {
        for (String path : List.of("/jobs", "/", "/jobs?queue=mail")) {
            List<HttpResponse<String>> pages = new ArrayList<>();
            List<ILoggingEvent> logged = logged(() -> pages.add(brokenHttp.get(path)));
            HttpResponse<String> page = pages.get(0);
            assertThat(page.statusCode()).as(path).isEqualTo(500);
            assertThat(page.body()).contains("<h1>Something went wrong</h1>", "The details are in the server log");
            assertNoLeak(page.body());
            Matcher reference =
                    Pattern.compile("under reference ([0-9a-f]+)\\.").matcher(page.body());
            assertThat(reference.find()).as("a reference on the page").isTrue();
            assertThat(logged).as(path).singleElement().satisfies(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.ERROR);
                assertThat(e.getFormattedMessage()).contains("reference " + reference.group(1));
                assertThat(e.getThrowableProxy()).as("the throwable").isNotNull();
            });
        }
    }

    private static void assertNoLeak(String body) {
        for (String leak : LEAKS) {
            assertThat(body).as("the page shows %s", leak).doesNotContain(leak);
        }
    }

    /** The dashboard's log records while {@code work} runs. */
    static List<ILoggingEvent> logged(Runnable work) {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.locksmith.dashboard");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            work.run();
        } finally {
            logger.detachAppender(appender);
        }
        synchronized (appender) {
            return List.copyOf(appender.list);
        }
    }
}
