package dev.locksmith.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The default codec: Jackson when it is there, a stand-in that says what to do when it is not. */
class CodecsTest {

    record Stamp(LocalDate day, OffsetDateTime at) {}

    @Test
    void theStandardCodecIsJacksonWithJavaTimeAsIsoStrings() {
        assertThat(JobCodec.standard()).isInstanceOf(JacksonJobCodec.class);
        Stamp stamp =
                new Stamp(LocalDate.of(2026, 3, 1), OffsetDateTime.of(2026, 3, 1, 4, 5, 6, 0, ZoneOffset.ofHours(2)));
        String json = JobCodec.standard().encode(stamp);
        assertThat(json).isEqualTo("{\"day\":\"2026-03-01\",\"at\":\"2026-03-01T04:05:06+02:00\"}");
        assertThat(JobCodec.standard().decode(json, Stamp.class)).isEqualTo(stamp);
        // a field the consumer's class does not know yet (rolling deployment) is ignored
        assertThat(JobCodec.standard()
                        .decode("{\"day\":\"2026-03-01\",\"added\":1}", Stamp.class)
                        .day())
                .isEqualTo(LocalDate.of(2026, 3, 1));
    }

    @Test
    void withoutJacksonEveryCallSaysHowToFixIt() {
        JobCodec missing = new Codecs.Missing();
        assertThatThrownBy(() -> missing.encode(new Stamp(null, null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("jackson-databind is not on the class path")
                .hasMessageContaining("JobQueueConfig.builder().codec(...)");
        assertThatThrownBy(() -> missing.decode("{}", Stamp.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("JobHandlers.builder().codec(...)");
    }
}
