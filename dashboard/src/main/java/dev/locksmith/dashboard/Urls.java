package dev.locksmith.dashboard;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Query strings for links; the result is escaped again where it goes into an attribute. */
final class Urls {

    private Urls() {}

    /** {@code name=value}, the value percent-encoded. */
    static String query(String name, String value) {
        return name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
