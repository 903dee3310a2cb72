package dev.locksmith.dashboard;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Markup that is safe to send: the only way the dashboard writes HTML. {@link #of} fills a
 * template written in this package with values, and escapes every value that is not itself an
 * {@code Html}; so payloads, errors, queue names, queries and every other value from the database
 * or the request reach the page through {@link #escape} and nothing else.
 */
final class Html {

    static final Html EMPTY = new Html("");

    private final String markup;

    private Html(String markup) {
        this.markup = markup;
    }

    /**
     * Fills {@code template}'s {@code {}} placeholders, in order, with {@code values}: an
     * {@code Html} as it is, anything else escaped ({@code null} as nothing).
     *
     * @throws IllegalArgumentException when the counts of placeholders and values differ
     */
    static Html of(String template, @Nullable Object... values) {
        StringBuilder out = new StringBuilder(template.length() + 16 * values.length);
        int from = 0;
        int used = 0;
        for (int at = template.indexOf("{}"); at >= 0; at = template.indexOf("{}", from)) {
            if (used == values.length) {
                throw new IllegalArgumentException("more placeholders than values in: " + template);
            }
            out.append(template, from, at);
            Object value = values[used++];
            out.append(value instanceof Html html ? html.markup : escape(value));
            from = at + 2;
        }
        if (used != values.length) {
            throw new IllegalArgumentException("more values than placeholders in: " + template);
        }
        return new Html(out.append(template, from, template.length()).toString());
    }

    /** Markup written in this package, without values. */
    static Html raw(String trusted) {
        return new Html(trusted);
    }

    static Html join(List<Html> parts) {
        StringBuilder out = new StringBuilder();
        parts.forEach(p -> out.append(p.markup));
        return new Html(out.toString());
    }

    /**
     * {@code value}'s text with {@code & < > " '} replaced by character references, so that it
     * is text in an element and stays inside a quoted attribute; {@code null} is the empty string.
     */
    static String escape(@Nullable Object value) {
        if (value == null) {
            return "";
        }
        String text = value.toString();
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = switch (c) {
                case '&' -> "&amp;";
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> null;
            };
            if (replacement != null) {
                if (out == null) {
                    out = new StringBuilder(text.length() + 16).append(text, 0, i);
                }
                out.append(replacement);
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof Html html && html.markup.equals(markup);
    }

    @Override
    public int hashCode() {
        return Objects.hash(markup);
    }

    @Override
    public String toString() {
        return markup;
    }
}
