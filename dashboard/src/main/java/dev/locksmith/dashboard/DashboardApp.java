package dev.locksmith.dashboard;

import dev.locksmith.jobs.JobQueue;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard as a function from {@link Request} to {@link Response}, independent of any
 * server: routes, the read-only switch, protection against cross-site requests, security headers
 * and static assets. The adapters ({@link Dashboard}, {@link DashboardServlet}) only translate.
 *
 * <p>Cross-site request forgery: every action is a POST that must carry this instance's random
 * token twice, in a form field and in a {@code SameSite=Strict} cookie (a cross-site form can set
 * neither), and whose {@code Origin}, when the browser sends one, is the dashboard's own.
 */
final class DashboardApp {

    private static final Logger LOG = LoggerFactory.getLogger(DashboardApp.class);

    static final String CSRF_COOKIE = "locksmith_csrf";
    static final String CSRF_FIELD = "csrf";

    private static final Pattern JOB = Pattern.compile("/jobs/(\\d{1,18})");
    private static final Pattern JOB_ACTION = Pattern.compile("/jobs/(\\d{1,18})/([a-z]+)");
    private static final Map<String, String> ASSETS = Map.of(
            "/assets/dashboard.css", "text/css; charset=utf-8",
            "/assets/dashboard.js", "text/javascript; charset=utf-8");
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

    private final DashboardConfig config;
    private final String csrfToken;
    private final Map<String, byte[]> assets = new LinkedHashMap<>();
    private final QueuesPage queues;
    private final JobsPage jobs;
    private final JobPage job;
    private final SchedulesPage schedules;
    private final PoolPage pool;
    private final LocksPage locks;

    DashboardApp(DashboardConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        this.csrfToken = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        Reads reads = new Reads(config);
        JobQueue queue = new JobQueue(config.dsl());
        this.queues = new QueuesPage(config, reads, queue);
        this.jobs = new JobsPage(config, reads);
        this.job = new JobPage(config, reads, queue);
        this.schedules = new SchedulesPage(reads);
        this.pool = new PoolPage(config, reads);
        this.locks = new LocksPage(reads);
        for (String path : ASSETS.keySet()) {
            String resource = path.substring("/assets/".length());
            try (InputStream in = DashboardApp.class.getResourceAsStream("assets/" + resource)) {
                if (in == null) {
                    throw new IllegalStateException("missing resource " + resource);
                }
                assets.put(path, in.readAllBytes());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    DashboardConfig config() {
        return config;
    }

    Response handle(Request request) {
        Response response;
        try {
            response = route(request);
        } catch (BadRequest e) {
            response = error(request, 400, "Bad request", e.getMessage());
        } catch (RuntimeException e) {
            // The exception's message is for the log only: a database's names the statement and
            // the values it refused, which a read-only visitor must not see. The reference ties
            // the page to its log record (distinct, not secret).
            String reference = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
            LOG.error("dashboard: {} {} failed (reference {})", request.method(), request.path(), reference, e);
            response = error(
                    request,
                    500,
                    "Something went wrong",
                    "The dashboard could not answer this request. The details are in the server log, under reference "
                            + reference + ".");
        }
        Response secured = response.with("Content-Security-Policy", CSP)
                .with("X-Content-Type-Options", "nosniff")
                .with("X-Frame-Options", "DENY")
                .with("Referrer-Policy", "same-origin");
        if (!secured.headers().containsKey("Cache-Control")) {
            secured = secured.with("Cache-Control", "no-store");
        }
        if (Response.HTML.equals(secured.contentType())) {
            secured = secured.with(
                    "Set-Cookie",
                    CSRF_COOKIE + "=" + csrfToken + "; Path=" + (request.base().isEmpty() ? "/" : request.base())
                            + "; HttpOnly; SameSite=Strict");
        }
        return secured;
    }

    private Response route(Request request) {
        String path = request.path();
        String method = request.method();
        boolean get = method.equals("GET") || method.equals("HEAD");
        Matcher action = JOB_ACTION.matcher(path);
        if (action.matches()) {
            Optional<JobPage.Action> a = JobPage.Action.of(action.group(2));
            if (a.isEmpty()) {
                return notFound(request);
            }
            long id = Long.parseLong(action.group(1));
            if (!get && !method.equals("POST")) {
                return methodNotAllowed("GET, POST");
            }
            if (config.readOnly()) {
                return error(request, 403, "Read-only", "This dashboard is read-only: actions are disabled.");
            }
            if (get) {
                return page(request, job.confirm(request, id, a.get(), csrfToken), null);
            }
            if (!crossSiteSafe(request)) {
                return error(
                        request, 403, "Refused", "The request did not come from this dashboard (CSRF check failed).");
            }
            JobPage.Outcome outcome = job.perform(id, a.get());
            LOG.info("dashboard: {} job {} by {}: {}", a.get().path, id, request.user(), outcome);
            return Response.redirect(
                    request.base() + "/jobs/" + id + "?action=" + a.get().path + "&result=" + outcome.param());
        }
        if (!get) {
            return methodNotAllowed("GET");
        }
        byte[] asset = assets.get(path);
        String type = ASSETS.get(path);
        if (asset != null && type != null) {
            return new Response(200, type, Map.of("Cache-Control", "max-age=300"), asset);
        }
        Matcher jobPath = JOB.matcher(path);
        if (jobPath.matches()) {
            long id = Long.parseLong(jobPath.group(1));
            Html flash = flash(request, id);
            Layout.Page page = job.render(request, id);
            if (page == null) {
                Html body = Html.of(
                        "<h1>Job {} not found</h1><p>Its row is gone: claimed in transactional mode, completed without "
                                + "<code>keepCompleted</code>, or deleted. <a href=\"{}/jobs\">All jobs</a></p>",
                        id,
                        request.base());
                return Response.html(
                        404,
                        Layout.render(
                                config, request, new Layout.Page("Not found", Layout.Nav.JOBS, body, null), flash));
            }
            return page(request, page, flash);
        }
        return switch (path) {
            case "/", "" -> page(request, queues.render(request), null);
            case "/jobs" -> page(request, jobs.render(request), null);
            case "/schedules" -> page(request, schedules.render(request), null);
            case "/pool" -> page(request, pool.render(request), null);
            case "/locks" -> page(request, locks.render(request), null);
            default -> notFound(request);
        };
    }

    private Response page(Request request, Layout.@Nullable Page page, @Nullable Html flash) {
        if (page == null) {
            return notFound(request);
        }
        if (request.fragment() && page.live() != null) {
            return Response.html(200, page.live());
        }
        return Response.html(200, Layout.render(config, request, page, flash));
    }

    private static @Nullable Html flash(Request request, long id) {
        Optional<JobPage.Action> action = JobPage.Action.of(String.valueOf(request.param("action")));
        Optional<JobPage.Outcome> outcome = JobPage.Outcome.of(request.param("result"));
        if (action.isEmpty() || outcome.isEmpty()) {
            return null;
        }
        return Html.of(
                "<p class=\"flash {}\" id=\"flash\">{}</p>",
                outcome.get() == JobPage.Outcome.APPLIED ? "ok" : "bad",
                JobPage.message(id, action.get(), outcome.get()));
    }

    /**
     * Whether a POST carries the token in both places, and, when the browser says where it comes
     * from, comes from here.
     */
    boolean crossSiteSafe(Request request) {
        String field = request.form().raw(CSRF_FIELD);
        String cookie = request.cookie(CSRF_COOKIE);
        if (field == null || cookie == null || !same(field, csrfToken) || !same(cookie, csrfToken)) {
            return false;
        }
        String fetchSite = request.header("Sec-Fetch-Site");
        if (fetchSite != null && !fetchSite.equals("same-origin") && !fetchSite.equals("none")) {
            return false;
        }
        String origin = request.header("Origin");
        String host = request.header("Host");
        if (origin != null && host != null) {
            try {
                URI uri = URI.create(origin);
                String authority = uri.getRawAuthority();
                return authority != null && authority.toLowerCase(Locale.ROOT).equals(host.toLowerCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return false;
            }
        }
        return true;
    }

    private static boolean same(String a, String b) {
        return MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    String csrfToken() {
        return csrfToken;
    }

    private Response notFound(Request request) {
        return error(request, 404, "Not found", "There is no page " + request.path() + " here.");
    }

    private static Response methodNotAllowed(String allow) {
        return new Response(
                        405,
                        "text/plain; charset=utf-8",
                        Map.of(),
                        ("method not allowed; allowed: " + allow).getBytes(StandardCharsets.UTF_8))
                .with("Allow", allow);
    }

    private Response error(Request request, int status, String title, @Nullable String message) {
        Html body = Html.of(
                "<h1>{}</h1><p class=\"error\">{}</p><p><a href=\"{}/\">Queues</a></p>",
                title,
                message,
                request.base());
        return Response.html(
                status, Layout.render(config, request, new Layout.Page(title, Layout.Nav.NONE, body, null), null));
    }
}
