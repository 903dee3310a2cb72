package dev.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The one rule for text the library writes: names refused, free text repaired. */
class TextsTest {

    @Test
    void aNameWithUPlus0000OrAnUnpairedSurrogateIsRefusedNamingTheFieldAndThePlace() {
        assertThatThrownBy(() -> Texts.requireName("queue", "a\u0000b", 128))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("queue must not contain U+0000 (at index 1): PostgreSQL text cannot hold it");
        assertThatThrownBy(() -> Texts.requireName("kind", "k\uD800", 128))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("kind must not contain an unpaired surrogate (U+D800 at index 1): it has no UTF-8 form "
                        + "and would be stored as '?'");
        assertThatThrownBy(() -> Texts.requireStorable("key", "\uDC00\uD800"))
                .hasMessageContaining("U+DC00 at index 0");
        assertThatThrownBy(() -> Texts.requireStorable("key", "ab\uD83D")).hasMessageContaining("U+D83D at index 2");
    }

    @Test
    void blankTooLongAndNullAreRefusedAsBefore() {
        assertThatThrownBy(() -> Texts.requireName("queue", " \t", 128)).hasMessage("queue must not be blank");
        assertThatThrownBy(() -> Texts.requireName("queue", "x".repeat(129), 128))
                .hasMessage("queue must be at most 128 characters, was 129");
        assertThatThrownBy(() -> Texts.requireName("queue", null, 128))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("queue");
    }

    @Test
    void textPostgresqlStoresIsAccepted() {
        for (String ok : new String[] {"ключ", "k\uD83D\uDE00", "a'b\"c\\d", "\u202Eevil", "a\u0001b", "日本語"}) {
            assertThat(Texts.requireName("key", ok, 128)).isSameAs(ok);
        }
    }

    @Test
    void freeTextIsRepairedAndCutWithoutSplittingASurrogatePair() {
        assertThat(Texts.storable(null, 10)).isEmpty();
        assertThat(Texts.storable("fine", 10)).isEqualTo("fine");
        assertThat(Texts.storable("a\u0000b\uD800c\uDC00\uD83D\uDE00", 100))
                .isEqualTo("a\uFFFDb\uFFFDc\uFFFD\uD83D\uDE00");
        assertThat(Texts.storable("abc\uD83D\uDE00", 4)).isEqualTo("abc");
        assertThat(Texts.storable("abc\uD83D\uDE00", 5)).isEqualTo("abc\uD83D\uDE00");
        assertThat(Texts.storable("abcdef", 3)).isEqualTo("abc");
        assertThat(Texts.storable("\uD83D", 1)).isEqualTo("\uFFFD");
    }
}
