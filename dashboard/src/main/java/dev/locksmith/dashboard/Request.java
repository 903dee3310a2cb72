package dev.locksmith.dashboard;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A request as the server adapters hand it to {@link DashboardApp}, independent of either.
 *
 * @param method GET, POST, ...
 * @param path the decoded path below the dashboard's mount point, starting with {@code /}
 * @param base the mount point as links must start (empty at the root, else {@code /locksmith})
 * @param query the query parameters (first value of each)
 * @param form the form fields of a POST (first value of each); empty otherwise
 * @param headers the request's headers
 * @param user the authenticated user, when the adapter knows one
 */
record Request(
        String method,
        String path,
        String base,
        Map<String, String> query,
        Map<String, String> form,
        Headers headers,
        @Nullable String user) {

    /** The longest form body read; a larger one is refused. */
    static final int MAX_FORM_BYTES = 16 * 1024;

    private static final int MAX_PARAMETERS = 64;

    /** Header lookup, case-insensitive by name. */
    @FunctionalInterface
    interface Headers {
        /** The first value of the header, or null. */
        @Nullable
        String get(String name);
    }

    @Nullable
    String param(String name) {
        String value = query.get(name);
        return value == null || value.isEmpty() ? null : value;
    }

    @Nullable
    String header(String name) {
        return headers.get(name);
    }

    /** Whether the page's script asks for the live part only. */
    boolean fragment() {
        return "1".equals(header("X-Locksmith-Fragment"));
    }

    @Nullable
    String cookie(String name) {
        String all = header("Cookie");
        if (all == null) {
            return null;
        }
        for (String pair : all.split(";", -1)) {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).trim().equals(name)) {
                return pair.substring(eq + 1).trim();
            }
        }
        return null;
    }

    /**
     * Parses {@code application/x-www-form-urlencoded} text (a query string or a form body),
     * keeping the first value of each name and at most 64 names.
     */
    static Map<String, String> parseUrlEncoded(@Nullable String text) {
        Map<String, String> result = new LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return result;
        }
        for (String pair : text.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            if (result.size() == MAX_PARAMETERS) {
                break;
            }
            int eq = pair.indexOf('=');
            try {
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                result.putIfAbsent(name, value);
            } catch (IllegalArgumentException malformed) {
                // A malformed escape: the parameter is ignored, as if absent.
            }
        }
        return result;
    }

    /** Whether {@code contentType} is a urlencoded form (the only body the dashboard reads). */
    static boolean isForm(@Nullable String contentType) {
        return contentType != null
                && contentType.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded");
    }
}
