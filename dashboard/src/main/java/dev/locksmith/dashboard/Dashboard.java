package dev.locksmith.dashboard;

import com.sun.net.httpserver.Authenticator;
import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard on the JDK's built-in HTTP server ({@code com.sun.net.httpserver}, in every JDK;
 * no other server library): a service embeds it, and {@code locksmith ui} starts it.
 *
 * <pre>{@code
 * DashboardConfig config = DashboardConfig.builder(dsl).build();   // read-only
 * try (Dashboard dashboard = Dashboard.builder(config).port(8080).basicAuth("ops", secret).start()) {
 *     ... // dashboard.uri() is http://127.0.0.1:8080/
 * }
 * }</pre>
 *
 * <p>It listens on 127.0.0.1 unless {@link Builder#bind(String)} names another address, and
 * serves requests on a few daemon threads of its own ({@link Builder#threads(int)}), each of
 * which holds at most one connection of the configured {@code DSLContext} while it answers.
 * {@link #close()} stops it.
 */
public final class Dashboard implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Dashboard.class);
    private static final String NODELAY = "sun.net.httpserver.nodelay";

    private final HttpServer server;
    private final ExecutorService executor;
    private final URI uri;

    private Dashboard(HttpServer server, ExecutorService executor, URI uri) {
        this.server = server;
        this.executor = executor;
        this.uri = uri;
    }

    /**
     * A builder for a server showing {@code config}'s dashboard.
     *
     * @param config what the dashboard reads and allows
     * @return a new builder: 127.0.0.1, port 8080, mounted at {@code /}, no authentication
     */
    public static Builder builder(DashboardConfig config) {
        return new Builder(Objects.requireNonNull(config, "config"));
    }

    /** {@return where the dashboard answers, e.g. {@code http://127.0.0.1:8080/}} */
    public URI uri() {
        return uri;
    }

    /** {@return the port the server listens on (the one chosen by the system when 0 was asked for)} */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Stops listening, lets running requests finish for up to a second, and stops the threads. Safe to call twice. */
    @Override
    public void close() {
        server.stop(1);
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Builds and starts a {@link Dashboard}; each setter validates its argument and names it when refusing. */
    public static final class Builder {
        private final DashboardConfig config;
        private String bind = "127.0.0.1";
        private int port = 8080;
        private String path = "";
        private int threads = 4;
        private @Nullable Authenticator authenticator;

        private Builder(DashboardConfig config) {
            this.config = config;
        }

        /**
         * The address to listen on (default {@code 127.0.0.1}: only this machine). Give
         * {@code 0.0.0.0} to listen on every interface, and then put authentication in front.
         *
         * @param address a host name or IP address
         * @return this builder
         */
        public Builder bind(String address) {
            Objects.requireNonNull(address, "bind");
            if (address.isBlank()) {
                throw new IllegalArgumentException("bind must not be blank");
            }
            this.bind = address;
            return this;
        }

        /**
         * The port (default 8080); 0 lets the system choose a free one ({@link Dashboard#port()}).
         *
         * @param port 0 to 65535
         * @return this builder
         * @throws IllegalArgumentException when {@code port} is out of range
         */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port must be between 0 and 65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * The path the dashboard is served under (default {@code /}), e.g. {@code /locksmith}.
         *
         * @param path {@code /} or a path of letters, digits, {@code -}, {@code _} and {@code /}
         *     segments starting with {@code /}
         * @return this builder
         * @throws IllegalArgumentException when {@code path} is not such a path
         */
        public Builder path(String path) {
            Objects.requireNonNull(path, "path");
            if (!path.matches("/|(/[A-Za-z0-9_-]+)+/?")) {
                throw new IllegalArgumentException(
                        "path must be / or /segments of letters, digits, - and _, was '" + path + "'");
            }
            this.path = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
            return this;
        }

        /**
         * Request threads (default 4): how many requests are answered at once, and so how many
         * connections of the data source the dashboard may hold at once.
         *
         * @param threads 1 to 64
         * @return this builder
         * @throws IllegalArgumentException when {@code threads} is out of range
         */
        public Builder threads(int threads) {
            if (threads < 1 || threads > 64) {
                throw new IllegalArgumentException("threads must be between 1 and 64, was " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * Requires HTTP basic authentication with this user and password (compared in constant
         * time). Basic authentication sends the password with every request: over anything but
         * the loopback interface, put TLS in front (a reverse proxy).
         *
         * @param user the user name, not blank
         * @param password the password, not empty
         * @return this builder
         */
        public Builder basicAuth(String user, String password) {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
            if (user.isBlank() || user.contains(":") || password.isEmpty()) {
                throw new IllegalArgumentException("basicAuth needs a user without ':' and a non-empty password");
            }
            byte[] expectedUser = user.getBytes(StandardCharsets.UTF_8);
            byte[] expectedPassword = password.getBytes(StandardCharsets.UTF_8);
            this.authenticator = new BasicAuthenticator("locksmith", StandardCharsets.UTF_8) {
                @Override
                @SuppressWarnings("ShortCircuitBoolean") // both compared always: no timing hint which was wrong
                public boolean checkCredentials(String u, String p) {
                    boolean userOk = MessageDigest.isEqual(u.getBytes(StandardCharsets.UTF_8), expectedUser);
                    boolean passwordOk = MessageDigest.isEqual(p.getBytes(StandardCharsets.UTF_8), expectedPassword);
                    return userOk & passwordOk;
                }
            };
            return this;
        }

        /**
         * The host application's own check of every request (in place of {@link #basicAuth}):
         * any {@code com.sun.net.httpserver.Authenticator}, e.g. one that validates a session
         * cookie or a bearer token. The principal it returns is shown in the page header and
         * logged with each action.
         *
         * @param authenticator the check
         * @return this builder
         */
        public Builder authenticator(Authenticator authenticator) {
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
            return this;
        }

        /**
         * Starts the server.
         *
         * @return the running dashboard; close it to stop
         * @throws UncheckedIOException when the address cannot be bound (the port is taken)
         */
        public Dashboard start() {
            // The JDK server writes a response's headers and body separately; with Nagle's
            // algorithm on, the body then waits for the client's delayed ACK of the headers, some
            // 40 ms per request on Linux. Read once, when the JDK's server first starts: set it
            // yourself (-Dsun.net.httpserver.nodelay=false) to keep Nagle.
            if (System.getProperty(NODELAY) == null) {
                System.setProperty(NODELAY, "true");
            }
            DashboardApp app = new DashboardApp(config);
            AtomicInteger n = new AtomicInteger();
            ExecutorService executor = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "locksmith-dashboard-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            HttpServer server;
            try {
                server = HttpServer.create(new InetSocketAddress(bind, port), 0);
            } catch (IOException e) {
                executor.shutdown();
                throw new UncheckedIOException("cannot listen on " + bind + ":" + port, e);
            }
            HttpContext context =
                    server.createContext(path.isEmpty() ? "/" : path, exchange -> serve(app, path, exchange));
            if (authenticator != null) {
                context.setAuthenticator(authenticator);
            }
            server.setExecutor(executor);
            server.start();
            String host = bind.contains(":") ? "[" + bind + "]" : bind;
            URI uri = URI.create("http://" + host + ":" + server.getAddress().getPort() + path + "/");
            LOG.info("locksmith dashboard at {} ({})", uri, config);
            return new Dashboard(server, executor, uri);
        }
    }

    private static void serve(DashboardApp app, String base, HttpExchange exchange) throws IOException {
        try (exchange) {
            serveUnguarded(app, base, exchange);
        } catch (IOException e) {
            LOG.debug(
                    "dashboard: {} {}: the client went away", exchange.getRequestMethod(), exchange.getRequestURI(), e);
        } catch (RuntimeException | Error e) {
            // The JDK server would close the connection without a word; say what happened.
            LOG.error("dashboard: {} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            throw e;
        }
    }

    private static void serveUnguarded(DashboardApp app, String base, HttpExchange exchange) throws IOException {
        {
            String raw = exchange.getRequestURI().getPath();
            String path = raw.length() >= base.length() ? raw.substring(base.length()) : "/";
            if (path.isEmpty()) {
                send(exchange, Response.redirect(base + "/"), false);
                return;
            }
            String method = exchange.getRequestMethod();
            Params form = Params.of(Map.of());
            if (method.equals("POST")
                    && Request.isForm(exchange.getRequestHeaders().getFirst("Content-Type"))) {
                InputStream body = exchange.getRequestBody();
                byte[] bytes = body.readNBytes(Request.MAX_FORM_BYTES + 1);
                if (bytes.length > Request.MAX_FORM_BYTES) {
                    send(exchange, new Response(413, "text/plain; charset=utf-8", Map.of(), new byte[0]), false);
                    return;
                }
                form = Params.parse(new String(bytes, StandardCharsets.UTF_8));
            }
            Request request = new Request(
                    method,
                    path,
                    base,
                    Params.parse(exchange.getRequestURI().getRawQuery()),
                    form,
                    exchange.getRequestHeaders()::getFirst,
                    exchange.getPrincipal() == null
                            ? null
                            : exchange.getPrincipal().getUsername());
            send(exchange, app.handle(request), method.equals("HEAD"));
        }
    }

    private static void send(HttpExchange exchange, Response response, boolean head) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", response.contentType());
        response.headers()
                .forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        byte[] body = response.body();
        if (head || body.length == 0) {
            exchange.sendResponseHeaders(response.status(), -1);
            return;
        }
        exchange.sendResponseHeaders(response.status(), body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
