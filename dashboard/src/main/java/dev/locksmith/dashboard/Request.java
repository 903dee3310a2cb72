package dev.locksmith.dashboard;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A request as the server adapters hand it to {@link DashboardApp}, independent of either.
 *
 * @param method GET, POST, ...
 * @param path the decoded path below the dashboard's mount point, starting with {@code /}
 * @param base the mount point as links must start (empty at the root, else {@code /locksmith})
 * @param query the query parameters (first value of each), read through the text rule
 *     ({@link #param})
 * @param form the form fields of a POST (first value of each); empty otherwise
 * @param headers the request's headers
 * @param user the authenticated user, when the adapter knows one
 */
record Request(
        String method,
        String path,
        String base,
        Params query,
        Params form,
        Headers headers,
        @Nullable String user) {

    /** The longest form body read; a larger one is refused. */
    static final int MAX_FORM_BYTES = 16 * 1024;

    /** Header lookup, case-insensitive by name. */
    @FunctionalInterface
    interface Headers {
        /** The first value of the header, or null. */
        @Nullable
        String get(String name);
    }

    /**
     * The query parameter {@code name}, null when absent or empty, after the text rule with the
     * default length limit ({@link Params#text}).
     *
     * @throws BadRequest when the value breaks the rule
     */
    @Nullable
    String param(String name) {
        return param(name, Params.DEFAULT_MAX_LENGTH);
    }

    /**
     * The query parameter {@code name}, null when absent or empty, after the text rule with
     * {@code maxLength} as the limit.
     *
     * @throws BadRequest when the value breaks the rule
     */
    @Nullable
    String param(String name, int maxLength) {
        return query.text(name, maxLength);
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

    /** Whether {@code contentType} is a urlencoded form (the only body the dashboard reads). */
    static boolean isForm(@Nullable String contentType) {
        return contentType != null
                && contentType.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded");
    }
}
