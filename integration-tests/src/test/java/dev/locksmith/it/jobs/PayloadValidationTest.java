package dev.locksmith.it.jobs;

import static dev.locksmith.codegen.Tables.JOBS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.NewJob;
import java.util.ArrayList;
import java.util.List;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;

/**
 * Payload validation agrees with PostgreSQL's own {@code jsonb} input: a payload NewJob accepts
 * is one PostgreSQL stores, and one it rejects is one PostgreSQL would have rejected (after
 * aborting the caller's transaction).
 */
class PayloadValidationTest extends DatabaseTest {

    /** Valid, invalid and edge-case JSON texts; the verdict of each comes from PostgreSQL. */
    private static final List<String> CORPUS = List.of(
            "{}",
            "[]",
            "0",
            "-0",
            "1.5e3",
            "1E+2",
            "-1.25E-2",
            "\"text\"",
            "true",
            "false",
            "null",
            " \t\n\r{\"a\": [1, 2, {\"b\": null}]} \n",
            "\"\\u00e9\\n\\t\\\"\\\\\\/\\b\\f\\r\"",
            "\"\\ud83d\\ude00\"",
            "\"\uD83D\uDE00\"",
            "\"é\"",
            "[1e131071]",
            "[0.1e-16382]",
            "[0e200000]",
            "[123.456e131069]",
            // invalid
            "{\"a\": 1,}",
            "[1,,2]",
            "{\"a\" 1}",
            "01",
            "-01",
            "\"\\u0000\"",
            "\"a\nb\"",
            "\"a\tb\"",
            "",
            " ",
            "1 2",
            "{} []",
            "{'a': 1}",
            "{a: 1}",
            "[1, 2",
            "{\"a\": 1",
            "tru",
            "nul",
            "TRUE",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "-",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud83d\"",
            "\"\\ude00\"",
            "\"\\ud83d\\u0041\"",
            "\"unterminated",
            "[1] // comment",
            "NaN",
            "Infinity",
            "[1e131072]",
            "[10e131071]",
            "[1e-16384]",
            "[0.1e-16383]",
            "[1.000e-16381]",
            "[0e-16384]",
            "{\"a\":1}\u0000");

    @Test
    void acceptsExactlyWhatPostgresqlAcceptsAsJsonb() {
        List<String> disagreements = new ArrayList<>();
        int valid = 0;
        for (String text : CORPUS) {
            boolean javaAccepts = accepts(text);
            boolean postgresAccepts = postgresAccepts(text);
            if (javaAccepts != postgresAccepts) {
                disagreements.add(text + " -> NewJob " + javaAccepts + ", PostgreSQL " + postgresAccepts);
            }
            valid += postgresAccepts ? 1 : 0;
        }
        assertThat(disagreements).isEmpty();
        assertThat(valid).as("the corpus has both kinds").isBetween(10, CORPUS.size() - 30);
    }

    @Test
    void deepNestingIsBoundedAndAcceptedUpToTheLimit() {
        String ok = "[".repeat(1000) + "]".repeat(1000);
        String deep = "[".repeat(1001) + "]".repeat(1001);
        assertThat(accepts(ok)).isTrue();
        assertThat(postgresAccepts(ok)).isTrue();
        assertThatThrownBy(() -> NewJob.builder("q", "k").payload(deep).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nested deeper than 1000");
    }

    @Test
    void aPayloadOverTheLimitIsRejectedBeforeAnythingIsWritten() {
        String big = "\"" + "x".repeat(NewJob.MAX_PAYLOAD_BYTES) + "\"";
        assertThatThrownBy(() -> NewJob.builder("q", "k").payload(big).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("payload must be at most 1048576 bytes");
        String multiByte = "\"" + "é".repeat(NewJob.MAX_PAYLOAD_BYTES / 2) + "\"";
        assertThatThrownBy(() -> NewJob.builder("q", "k").payload(multiByte).build())
                .as("the limit counts UTF-8 bytes, not chars")
                .isInstanceOf(IllegalArgumentException.class);
        String fits = "\"" + "x".repeat(NewJob.MAX_PAYLOAD_BYTES - 2) + "\"";
        assertThat(accepts(fits)).isTrue();
    }

    @Test
    void anInvalidPayloadLeavesTheCallersTransactionUsable() {
        JobQueue queue = new JobQueue(dsl);
        dsl.deleteFrom(JOBS).execute();
        long kept = dsl.transactionResult(c -> {
            long first = queue.enqueue(c.dsl(), NewJob.of("payloads", "k"));
            assertThatThrownBy(() -> queue.enqueue(
                            c.dsl(),
                            NewJob.builder("payloads", "k")
                                    .payload("\"\\u0000\"")
                                    .build()))
                    .isInstanceOf(IllegalArgumentException.class);
            queue.enqueue(c.dsl(), NewJob.of("payloads", "k"));
            return first;
        });
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("payloads"))).isEqualTo(2);
        assertThat(queue.find(dsl, kept)).isPresent();
    }

    private static boolean accepts(String text) {
        try {
            NewJob.builder("q", "k").payload(text).build();
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private boolean postgresAccepts(String text) {
        try {
            dsl.fetchValue("SELECT CAST(? AS jsonb) IS NOT NULL", text);
            return true;
        } catch (DataAccessException e) {
            return false;
        }
    }
}
