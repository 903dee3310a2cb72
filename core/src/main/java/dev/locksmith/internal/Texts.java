package dev.locksmith.internal;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one rule for text that locksmith writes to the database or hashes into a key. PostgreSQL's
 * {@code text} and {@code varchar} cannot hold U+0000 (the driver's bytes are refused with SQLSTATE
 * 22021, and the caller's whole transaction is aborted), and a Java string with an unpaired
 * surrogate has no UTF-8 form (the driver and {@code String.getBytes} write {@code ?} in its place,
 * so {@code "k\uD800"} and {@code "k\uDC00"} would both be stored, or hashed, as {@code "k?"}).
 * <ul>
 *   <li>Names and keys a caller gives ({@link #requireName}) are refused with
 *       {@link IllegalArgumentException}, naming the field, before anything is sent.</li>
 *   <li>Free text the library stores for a human to read (an error message, a stack trace, a
 *       reason) is repaired instead ({@link #storable}): refusing it would make recording a
 *       failure fail. U+0000 and unpaired surrogates become U+FFFD, and a cut never splits a
 *       surrogate pair.</li>
 * </ul>
 * <b>Internal: not API.</b>
 */
public final class Texts {

    /** What {@link #storable} writes in place of a character PostgreSQL cannot store. */
    public static final char REPLACEMENT = '\uFFFD';

    private Texts() {}

    /**
     * Returns {@code value} if it is a valid name: not null, not blank, at most {@code maxLength}
     * UTF-16 characters, and {@linkplain #requireStorable storable}.
     *
     * @param field named in the messages
     * @param value the name
     * @param maxLength the most characters
     * @return {@code value}
     * @throws NullPointerException when {@code value} is null
     * @throws IllegalArgumentException naming {@code field} otherwise
     */
    public static String requireName(String field, String value, int maxLength) {
        Objects.requireNonNull(value, field);
        if (value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank");
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(
                    field + " must be at most " + maxLength + " characters, was " + value.length());
        }
        return requireStorable(field, value);
    }

    /**
     * Returns {@code value} if PostgreSQL stores it exactly as given: no U+0000 and no unpaired
     * surrogate.
     *
     * @param field named in the message
     * @param value the text
     * @return {@code value}
     * @throws NullPointerException when {@code value} is null
     * @throws IllegalArgumentException naming {@code field}, the character and its index otherwise
     */
    public static String requireStorable(String field, String value) {
        Objects.requireNonNull(value, field);
        int bad = firstUnstorable(value);
        if (bad >= 0) {
            char c = value.charAt(bad);
            throw new IllegalArgumentException(field
                    + (c == 0
                            ? " must not contain U+0000 (at index " + bad + "): PostgreSQL text cannot hold it"
                            : " must not contain an unpaired surrogate (" + hex(c) + " at index " + bad
                                    + "): it has no UTF-8 form and would be stored as '?'"));
        }
        return value;
    }

    /**
     * {@code text} as PostgreSQL can store it, at most {@code maxLength} characters: U+0000 and
     * unpaired surrogates replaced by {@link #REPLACEMENT}, and cut before a surrogate pair that
     * would straddle the limit. Null becomes empty.
     *
     * @param text what to store, possibly null
     * @param maxLength the most characters, at least 1
     * @return the text to store
     */
    public static String storable(@Nullable String text, int maxLength) {
        if (text == null) {
            return "";
        }
        int end = Math.min(text.length(), maxLength);
        if (end < text.length()
                && end > 0
                && Character.isHighSurrogate(text.charAt(end - 1))
                && Character.isLowSurrogate(text.charAt(end))) {
            end--;
        }
        String cut = end == text.length() ? text : text.substring(0, end);
        if (firstUnstorable(cut) < 0) {
            return cut;
        }
        StringBuilder repaired = new StringBuilder(cut.length());
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            if (c == 0) {
                repaired.append(REPLACEMENT);
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < cut.length()
                    && Character.isLowSurrogate(cut.charAt(i + 1))) {
                repaired.append(c).append(cut.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                repaired.append(REPLACEMENT);
            } else {
                repaired.append(c);
            }
        }
        return repaired.toString();
    }

    /** The index of the first U+0000 or unpaired surrogate in {@code s}, or -1. */
    static int firstUnstorable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0) {
                return i;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return i;
                }
            } else if (Character.isLowSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    private static String hex(char c) {
        return String.format("U+%04X", (int) c);
    }
}
