package dev.locksmith.dashboard;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * {@code application/x-www-form-urlencoded} parameters (a query string or a form body), decoded
 * strictly, and the one rule every text parameter passes before a page uses it
 * ({@link #text}): well-formed percent-encoding of UTF-8, valid UTF-16 (no unpaired surrogate), no
 * U+0000, and a length limit. A value PostgreSQL would refuse (a NUL) or store altered (an
 * unpaired surrogate) is the client's mistake, answered with 400 and a plain message before any
 * statement runs, never a database error.
 *
 * <p>The first value of each name is kept, and at most 64 names. A value that is not valid
 * percent-encoded UTF-8 (a bad escape, a truncated or overlong sequence, an encoded surrogate) is
 * remembered as malformed rather than decoded with replacement characters, and refused when a
 * page asks for it; a parameter no page reads is ignored, whatever it holds.
 */
final class Params {

    /** The longest text a parameter may have unless a page sets another limit. */
    static final int DEFAULT_MAX_LENGTH = 256;

    private static final int MAX_PARAMETERS = 64;

    private final Map<String, String> values;
    private final Set<String> malformed;

    private Params(Map<String, String> values, Set<String> malformed) {
        this.values = values;
        this.malformed = malformed;
    }

    /** Parameters parsed from {@code text}, {@code null} or empty for none. */
    static Params parse(@Nullable String text) {
        Map<String, String> values = new LinkedHashMap<>();
        Set<String> malformed = new HashSet<>();
        if (text != null) {
            for (String pair : text.split("&", -1)) {
                if (pair.isEmpty()) {
                    continue;
                }
                if (values.size() + malformed.size() >= MAX_PARAMETERS) {
                    break;
                }
                int eq = pair.indexOf('=');
                String name = decode(eq < 0 ? pair : pair.substring(0, eq));
                if (name == null || values.containsKey(name) || malformed.contains(name)) {
                    continue; // a name no page asks for, or not the first value
                }
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                if (value == null) {
                    malformed.add(name);
                } else {
                    values.put(name, value);
                }
            }
        }
        return new Params(values, malformed);
    }

    /** Parameters a servlet container has decoded already (first value of each). */
    static Params of(Map<String, String> decoded) {
        return new Params(new LinkedHashMap<>(decoded), Set.of());
    }

    /**
     * The value of {@code name} as sent, without the text rule, or null when absent or malformed:
     * for values only compared, never shown or sent to the database (the CSRF token).
     */
    @Nullable
    String raw(String name) {
        return values.get(name);
    }

    /**
     * The text of parameter {@code name}, or null when it is absent or empty.
     *
     * @throws BadRequest naming the parameter, when its value is not valid percent-encoded UTF-8,
     *     is longer than {@code maxLength}, contains U+0000 or an unpaired surrogate
     */
    @Nullable
    String text(String name, int maxLength) {
        if (malformed.contains(name)) {
            throw new BadRequest(name + " must be URL-encoded UTF-8 text");
        }
        String value = values.get(name);
        if (value == null || value.isEmpty()) {
            return null;
        }
        requireText(name, value, maxLength);
        return value;
    }

    /**
     * The text rule: at most {@code maxLength} characters (UTF-16 code units, as the library
     * counts its names), no U+0000, no unpaired surrogate.
     *
     * @throws BadRequest naming the parameter and what is wrong with it
     */
    static void requireText(String name, String value, int maxLength) {
        if (value.length() > maxLength) {
            throw new BadRequest(name + " must be at most " + maxLength + " characters");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\0') {
                throw new BadRequest(name + " must not contain the NUL character (U+0000)");
            }
            if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new BadRequest(name + " must be valid Unicode text (it has an unpaired surrogate)");
            }
        }
    }

    /**
     * Percent-decodes {@code encoded} ({@code +} is a space), the escaped bytes as UTF-8; null
     * when an escape is malformed or the bytes are not valid UTF-8. Characters sent unescaped
     * are kept as they are.
     */
    private static @Nullable String decode(String encoded) {
        StringBuilder out = new StringBuilder(encoded.length());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    return null;
                }
                int high = Character.digit(encoded.charAt(i + 1), 16);
                int low = Character.digit(encoded.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    return null;
                }
                bytes.write(high << 4 | low);
                i += 2;
                continue;
            }
            if (bytes.size() > 0 && !flush(bytes, out)) {
                return null;
            }
            out.append(c == '+' ? ' ' : c);
        }
        return bytes.size() > 0 && !flush(bytes, out) ? null : out.toString();
    }

    /** Appends {@code bytes} decoded as strict UTF-8 and empties it; false when they are not UTF-8. */
    private static boolean flush(ByteArrayOutputStream bytes, StringBuilder out) {
        try {
            out.append(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())));
            bytes.reset();
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
