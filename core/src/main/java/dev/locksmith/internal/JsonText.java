package dev.locksmith.internal;

import java.nio.charset.StandardCharsets;

/**
 * Strict validation of a job payload against what PostgreSQL accepts as {@code jsonb}, so that
 * a bad payload fails in Java before anything is written (a rejected {@code INSERT} would abort
 * the caller's transaction). RFC 8259 exactly (no trailing commas, comments, single quotes,
 * leading zeros, bare control characters or trailing content), plus PostgreSQL's own rules:
 * no {@code \u0000} escape, escaped surrogates only as a high-low pair, and numbers within
 * {@code numeric}'s range (at most 131,072 digits before the point and 16,383 after it).
 * Unpaired surrogate characters in the Java string are rejected too: they could not be sent as
 * UTF-8 without being replaced. <b>Internal: not API.</b>
 */
public final class JsonText {

    /** Deepest nesting of arrays and objects accepted. */
    static final int MAX_DEPTH = 1000;

    private static final int MAX_INTEGER_DIGITS = 131_072;
    private static final int MAX_FRACTION_DIGITS = 16_383;

    private final String text;
    private int pos;

    private JsonText(String text) {
        this.text = text;
    }

    /**
     * Throws {@link IllegalArgumentException} naming {@code what}, the problem and its offset
     * unless {@code json} is one JSON value PostgreSQL accepts as {@code jsonb} and its UTF-8
     * form is at most {@code maxBytes}.
     *
     * @param what the field, named in the message
     * @param json the text
     * @param maxBytes the most bytes of UTF-8
     */
    public static void requireValid(String what, String json, int maxBytes) {
        if (json.length() > maxBytes || utf8Length(json) > maxBytes) {
            throw new IllegalArgumentException(
                    what + " must be at most " + maxBytes + " bytes of UTF-8, was " + utf8Length(json));
        }
        JsonText parser = new JsonText(json);
        try {
            parser.whitespace();
            parser.value(0);
            parser.whitespace();
            if (parser.pos != json.length()) {
                throw parser.error("unexpected content after the JSON value");
            }
        } catch (StringIndexOutOfBoundsException e) {
            throw parser.error("unexpected end of input");
        }
    }

    private static long utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private void value(int depth) {
        if (pos >= text.length()) {
            throw error("unexpected end of input, a value was expected");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{' -> object(depth + 1);
            case '[' -> array(depth + 1);
            case '"' -> string();
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    number();
                } else {
                    throw error("unexpected character '" + printable(c) + "', a value was expected");
                }
            }
        }
    }

    private void object(int depth) {
        requireDepth(depth);
        members('}', "an object", () -> {
            if (peek() != '"') {
                throw error("an object key must be a string");
            }
            string();
            whitespace();
            expect(':');
            whitespace();
            value(depth);
        });
    }

    private void array(int depth) {
        requireDepth(depth);
        members(']', "an array", () -> value(depth));
    }

    /** The members of an object or array, from its opening bracket to {@code close}, comma-separated. */
    private void members(char close, String what, Runnable member) {
        pos++;
        whitespace();
        if (peek() == close) {
            pos++;
            return;
        }
        while (true) {
            whitespace();
            member.run();
            whitespace();
            char c = next();
            if (c == close) {
                return;
            }
            if (c != ',') {
                pos--;
                throw error("',' or '" + close + "' expected in " + what);
            }
        }
    }

    private void string() {
        pos++; // opening quote
        while (true) {
            char c = next();
            if (c == '"') {
                return;
            }
            if (c < 0x20) {
                pos--;
                throw error("control character U+" + hex(c) + " must be escaped in a string");
            }
            if (c == '\\') {
                escape();
            } else if (Character.isHighSurrogate(c)) {
                if (pos >= text.length() || !Character.isLowSurrogate(text.charAt(pos))) {
                    throw error("unpaired surrogate character in a string");
                }
                pos++;
            } else if (Character.isLowSurrogate(c)) {
                throw error("unpaired surrogate character in a string");
            }
        }
    }

    private void escape() {
        char e = next();
        switch (e) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> {}
            case 'u' -> {
                int code = hex4();
                if (code == 0) {
                    throw error("\\u0000 is not allowed in jsonb");
                }
                if (Character.isHighSurrogate((char) code)) {
                    if (!(peek() == '\\' && pos + 1 < text.length() && text.charAt(pos + 1) == 'u')) {
                        throw error("a high surrogate escape must be followed by a low surrogate escape");
                    }
                    pos += 2;
                    if (!Character.isLowSurrogate((char) hex4())) {
                        throw error("a high surrogate escape must be followed by a low surrogate escape");
                    }
                } else if (Character.isLowSurrogate((char) code)) {
                    throw error("a low surrogate escape must follow a high surrogate escape");
                }
            }
            default -> throw error("invalid escape '\\" + printable(e) + "'");
        }
    }

    private int hex4() {
        int value = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(next(), 16);
            if (digit < 0) {
                throw error("\\u must be followed by four hexadecimal digits");
            }
            value = value * 16 + digit;
        }
        return value;
    }

    /**
     * {@code -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?}, then numeric's range: digits
     * before the point (from the most significant non-zero digit) and after it, exponent applied.
     */
    @SuppressWarnings("IntLongMath") // a difference of two string positions: no int overflow
    private void number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        int intStart = pos;
        if (peek() == '0') {
            pos++;
        } else if (isDigit(peek())) {
            digits();
        } else {
            throw error("a digit is expected in a number");
        }
        int intEnd = pos;
        int fracStart = pos;
        int fracEnd = pos;
        if (peek() == '.') {
            pos++;
            fracStart = pos;
            if (!isDigit(peek())) {
                throw error("a digit is expected after the decimal point");
            }
            digits();
            fracEnd = pos;
        }
        long exponent = 0;
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            boolean negative = false;
            if (peek() == '+' || peek() == '-') {
                negative = next() == '-';
            }
            if (!isDigit(peek())) {
                throw error("a digit is expected in the exponent");
            }
            while (isDigit(peek())) {
                exponent = Math.min(exponent * 10 + (next() - '0'), 1_000_000_000L);
            }
            exponent = negative ? -exponent : exponent;
        }
        if (pos < text.length() && isDigit(text.charAt(pos))) {
            throw error("leading zeros are not allowed in a number");
        }
        int fractionDigits = fracEnd - fracStart;
        if (fractionDigits - exponent > MAX_FRACTION_DIGITS) {
            throw error("number " + abbreviate(start) + " has more than " + MAX_FRACTION_DIGITS
                    + " digits after the decimal point, beyond PostgreSQL's numeric");
        }
        // Position of the most significant non-zero digit: the integer digits it leaves
        long mostSignificant = Long.MIN_VALUE;
        for (int i = intStart; i < intEnd; i++) {
            if (text.charAt(i) != '0') {
                mostSignificant = intEnd - i;
                break;
            }
        }
        if (mostSignificant == Long.MIN_VALUE) {
            for (int i = fracStart; i < fracEnd; i++) {
                if (text.charAt(i) != '0') {
                    mostSignificant = -(i - fracStart);
                    break;
                }
            }
        }
        if (mostSignificant != Long.MIN_VALUE && mostSignificant + exponent > MAX_INTEGER_DIGITS) {
            throw error("number " + abbreviate(start) + " has more than " + MAX_INTEGER_DIGITS
                    + " digits before the decimal point, beyond PostgreSQL's numeric");
        }
    }

    private void digits() {
        while (isDigit(peek())) {
            pos++;
        }
    }

    private void literal(String word) {
        if (!text.startsWith(word, pos)) {
            throw error("invalid literal, '" + word + "' expected");
        }
        pos += word.length();
    }

    private void whitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private void requireDepth(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH + " levels");
        }
    }

    private void expect(char c) {
        if (next() != c) {
            pos--;
            throw error("'" + c + "' expected");
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next() {
        return text.charAt(pos++);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private String abbreviate(int start) {
        String n = text.substring(start, pos);
        return n.length() <= 40 ? n : n.substring(0, 20) + "..." + n.substring(n.length() - 10);
    }

    private static String printable(char c) {
        return c < 0x20 || c > 0x7e ? "U+" + hex(c) : String.valueOf(c);
    }

    private static String hex(char c) {
        return String.format("%04X", (int) c);
    }

    private IllegalArgumentException error(String problem) {
        return new IllegalArgumentException("payload is not valid JSON (as PostgreSQL reads jsonb): " + problem
                + " at offset " + Math.min(pos, text.length()));
    }
}
