package dev.locksmith.dashboard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A plain HTTP client for the handler-level tests: no redirects followed, no cookies kept. */
final class Http {

    private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");

    private final HttpClient client = HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final URI base;

    Http(URI base) {
        this.base = base;
    }

    HttpResponse<String> get(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(resolve(path))
                .timeout(Duration.ofSeconds(20))
                .GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> post(String path, String form, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(resolve(path))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> method(String method, String path) {
        return send(HttpRequest.newBuilder(resolve(path))
                .timeout(Duration.ofSeconds(20))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    URI resolve(String path) {
        return base.resolve(path.startsWith("/") ? path.substring(1) : path);
    }

    /** The CSRF token of a confirmation page. */
    static String csrf(String page) {
        Matcher m = CSRF.matcher(page);
        if (!m.find()) {
            throw new AssertionError("no csrf field in: " + page);
        }
        return m.group(1);
    }

    /** The value of the CSRF cookie a response set. */
    static String cookie(HttpResponse<?> response) {
        return response.headers().allValues("Set-Cookie").stream()
                .filter(c -> c.startsWith(DashboardApp.CSRF_COOKIE + "="))
                .map(c -> c.substring(0, c.indexOf(';')))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no csrf cookie"));
    }
}
