package dev.locksmith.dashboard;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.NewJob;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The servlet adapter as a container calls it, mounted at {@code /app/locksmith/*}: links under
 * the mount, the container's principal in the header, an action whose form the container (or a
 * filter before the servlet) has already parsed, hostile query parameters refused with 400 by the
 * same rule as on the JDK server, and a database failure answered with a generic 500.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardServletTest {

    private TestDatabase db;
    private TestDatabase brokenDb;
    private DashboardServlet servlet;
    private DashboardServlet broken;

    @BeforeAll
    void start() {
        db = TestDatabase.migrated("servlet", "locksmith", 4);
        servlet = new DashboardServlet(
                DashboardConfig.builder(db.dsl).readOnly(false).build());
        brokenDb = DashboardBadInputTest.brokenDatabase("servlet_broken");
        broken = new DashboardServlet(DashboardConfig.builder(brokenDb.dsl).build());
    }

    @AfterAll
    void stop() {
        if (db != null) {
            db.close();
        }
        if (brokenDb != null) {
            brokenDb.close();
        }
    }

    /** What the servlet answered. */
    record Answer(int status, Map<String, String> headers, String body) {}

    private Answer call(String method, String pathInfo, Map<String, String> headers, Map<String, String[]> params)
            throws Exception {
        return call(servlet, method, pathInfo, null, headers, params);
    }

    private Answer call(
            DashboardServlet target,
            String method,
            String pathInfo,
            String query,
            Map<String, String> headers,
            Map<String, String[]> params)
            throws Exception {
        Map<String, String> sent = new HashMap<>();
        int[] status = {200};
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        ServletOutputStream out = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {}

            @Override
            public void write(int b) {
                body.write(b);
            }
        };
        HttpServletRequest request = (HttpServletRequest) Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {HttpServletRequest.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "getMethod" -> method;
                    case "getContextPath" -> "/app";
                    case "getServletPath" -> "/locksmith";
                    case "getPathInfo" -> pathInfo;
                    case "getQueryString" -> query;
                    case "getHeader" -> headers.get((String) args[0]);
                    case "getContentType" -> method.equals("POST") ? "application/x-www-form-urlencoded" : null;
                    case "getContentLengthLong" -> 64L;
                    case "getParameterMap" -> params;
                    case "getUserPrincipal" -> (Principal) () -> "alice";
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        HttpServletResponse response = (HttpServletResponse) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {HttpServletResponse.class}, (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "setStatus" -> status[0] = (Integer) args[0];
                        case "setHeader" -> sent.put((String) args[0], (String) args[1]);
                        case "setContentType" -> sent.put("Content-Type", (String) args[0]);
                        case "setContentLength" -> {}
                        case "getOutputStream" -> {
                            return out;
                        }
                        default -> throw new UnsupportedOperationException(m.getName());
                    }
                    return null;
                });
        target.service(request, response);
        return new Answer(status[0], sent, body.toString(StandardCharsets.UTF_8));
    }

    @Test
    void servesPagesUnderItsMountAndRunsAnActionFromTheParsedForm() throws Exception {
        JobQueue queue = new JobQueue(db.dsl);
        long id = queue.enqueue(db.dsl, NewJob.of("mail", "send"));

        Answer root = call("GET", null, Map.of(), Map.of());
        assertThat(root.status()).isEqualTo(303);
        assertThat(root.headers()).containsEntry("Location", "/app/locksmith/");

        Answer queues = call("GET", "/", Map.of(), Map.of());
        assertThat(queues.status()).isEqualTo(200);
        assertThat(queues.body())
                .contains("href=\"/app/locksmith/jobs\"", "· alice", "/app/locksmith/assets/dashboard.js");

        Answer confirm = call("GET", "/jobs/" + id + "/cancel", Map.of(), Map.of());
        Matcher token = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(confirm.body());
        assertThat(token.find()).isTrue();
        assertThat(confirm.headers().get("Set-Cookie")).contains("Path=/app/locksmith");

        Answer refused =
                call("POST", "/jobs/" + id + "/cancel", Map.of(), Map.of("csrf", new String[] {token.group(1)}));
        assertThat(refused.status()).isEqualTo(403);
        Answer cancelled = call(
                "POST",
                "/jobs/" + id + "/cancel",
                Map.of("Cookie", DashboardApp.CSRF_COOKIE + "=" + token.group(1)),
                Map.of("csrf", new String[] {token.group(1)}));
        assertThat(cancelled.status()).isEqualTo(303);
        assertThat(cancelled.headers().get("Location"))
                .isEqualTo("/app/locksmith/jobs/" + id + "?action=cancel&result=applied");
        assertThat(queue.find(db.dsl, id).orElseThrow().status()).isEqualTo(JobStatus.CANCELLED);
        db.dsl.deleteFrom(JOBS).execute();
    }

    @Test
    void refusesHostileParametersWithTheSameRuleAsTheJdkServer() throws Exception {
        for (String query : List.of(
                "queue=a%00b",
                "kind=k%ED%A0%80", "key=%zz", "queue=k\uD800", "kind=" + "k".repeat(129), "status=%00")) {
            List<Answer> answers = new ArrayList<>();
            List<ILoggingEvent> logged = DashboardBadInputTest.logged(() -> {
                try {
                    answers.add(call(servlet, "GET", "/jobs", query, Map.of(), Map.of()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Answer answer = answers.get(0);
            assertThat(answer.status()).as(query).isEqualTo(400);
            assertThat(answer.body()).as(query).contains("<h1>Bad request</h1>", query.replaceAll("=.*", "") + " must");
            for (String leak : DashboardBadInputTest.LEAKS) {
                assertThat(answer.body()).as(query).doesNotContain(leak);
            }
            assertThat(logged).as(query).isEmpty();
        }
    }

    @Test
    void answersADatabaseFailureWithAGeneric500LoggedOnce() throws Exception {
        List<Answer> answers = new ArrayList<>();
        List<ILoggingEvent> logged = DashboardBadInputTest.logged(() -> {
            try {
                answers.add(call(broken, "GET", "/jobs", "queue=mail", Map.of(), Map.of()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Answer answer = answers.get(0);
        assertThat(answer.status()).isEqualTo(500);
        assertThat(answer.body()).contains("<h1>Something went wrong</h1>");
        for (String leak : DashboardBadInputTest.LEAKS) {
            assertThat(answer.body()).doesNotContain(leak);
        }
        assertThat(logged)
                .singleElement()
                .satisfies(e -> assertThat(e.getThrowableProxy()).isNotNull());
    }
}
