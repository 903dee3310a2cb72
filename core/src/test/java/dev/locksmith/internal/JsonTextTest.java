package dev.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What the strict validator says, and where; agreement with PostgreSQL is PayloadValidationTest's job. */
class JsonTextTest {

    private static void valid(String json) {
        assertThatCode(() -> JsonText.requireValid("payload", json, 1 << 20))
                .as(json)
                .doesNotThrowAnyException();
    }

    private static void invalid(String json, String problem) {
        assertThatThrownBy(() -> JsonText.requireValid("payload", json, 1 << 20))
                .as(json)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(problem);
    }

    @Test
    void namesTheProblemAndItsOffset() {
        invalid("{\"a\": 1,}", "an object key must be a string at offset 8");
        invalid("[1,,2]", "a value was expected at offset 3");
        invalid("{\"a\" 1}", "':' expected at offset 5");
        invalid("01", "leading zeros are not allowed");
        invalid("\"\\u0000\"", "\\u0000 is not allowed in jsonb");
        invalid("\"a\nb\"", "control character U+000A must be escaped");
        invalid("[1] x", "unexpected content after the JSON value at offset 4");
        invalid("[1", "unexpected end of input");
        invalid("\"\\ud83d\"", "a high surrogate escape must be followed by a low surrogate escape");
    }

    @Test
    void rejectsUnpairedSurrogateCharactersThatUtf8WouldReplace() {
        invalid("\"\uD83D\"", "unpaired surrogate");
        invalid("[\"\uDE00\"]", "unpaired surrogate");
        valid("\"\uD83D\uDE00\"");
    }

    @Test
    void appliesTheSizeLimitInUtf8Bytes() {
        assertThatThrownBy(() -> JsonText.requireValid("payload", "\"éé\"", 5))
                .hasMessage("payload must be at most 5 bytes of UTF-8, was 6");
        valid("\"é\"");
    }
}
