package dev.locksmith.dashboard;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@link DashboardApp} answers, for the adapters to send.
 *
 * @param status the HTTP status
 * @param contentType the {@code Content-Type}
 * @param headers further headers (not {@code Content-Type} or {@code Content-Length})
 * @param body the body, empty for none
 */
@SuppressWarnings("ArrayRecordComponent") // built once and sent; never compared or shared
record Response(int status, String contentType, Map<String, String> headers, byte[] body) {

    static final String HTML = "text/html; charset=utf-8";

    static Response html(int status, Html page) {
        return new Response(status, HTML, new LinkedHashMap<>(), page.toString().getBytes(StandardCharsets.UTF_8));
    }

    static Response redirect(String location) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Location", location);
        return new Response(303, "text/plain; charset=utf-8", headers, new byte[0]);
    }

    Response with(String header, String value) {
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.put(header, value);
        return new Response(status, contentType, copy, body);
    }
}
