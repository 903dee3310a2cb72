package dev.locksmith.jobs.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.internal.ErrorTexts;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobStatus;
import dev.locksmith.jobs.TestJobs;
import dev.locksmith.jobs.engine.JobRow;
import java.time.OffsetDateTime;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class JobLoggingTest {

    private static final Job JOB = TestJobs.of(new JobRow(
            42,
            "mail",
            0,
            "welcome",
            "{}",
            100,
            OffsetDateTime.now(),
            JobStatus.RUNNING,
            3,
            25,
            "w1",
            OffsetDateTime.now(),
            null,
            null,
            OffsetDateTime.now(),
            null,
            null,
            null,
            1,
            (short) 0,
            null));

    @AfterEach
    void clear() {
        MDC.clear();
    }

    @Test
    @SuppressWarnings("try")
    void theScopeSetsTheJobsKeysAndRestoresWhatTheThreadHadBefore() {
        MDC.put("request", "r-1");
        MDC.put(JobLogging.QUEUE, "outer");
        try (JobLogging.Scope scope = JobLogging.mdc(JOB, 3)) {
            assertThat(MDC.getCopyOfContextMap())
                    .isEqualTo(Map.of(
                            "request",
                            "r-1",
                            JobLogging.JOB_ID,
                            "42",
                            JobLogging.QUEUE,
                            "mail",
                            JobLogging.KIND,
                            "welcome",
                            JobLogging.ATTEMPT,
                            "3"));
        }
        assertThat(MDC.getCopyOfContextMap()).isEqualTo(Map.of("request", "r-1", JobLogging.QUEUE, "outer"));
    }

    @Test
    @SuppressWarnings("try")
    void anEmptyMdcIsEmptyAgainAfterTheScope() {
        try (JobLogging.Scope scope = JobLogging.mdc(JOB, 1)) {
            assertThat(MDC.get(JobLogging.JOB_ID)).isEqualTo("42");
        }
        assertThat(MDC.getCopyOfContextMap()).isNullOrEmpty();
    }

    @Test
    void lastErrorKeepsTheStackTraceCutToItsBound() {
        Exception deep = new IllegalStateException("outer", new IllegalArgumentException("inner"));
        String described = ErrorTexts.describe(deep);
        assertThat(described)
                .startsWith("java.lang.IllegalStateException: outer\n\tat ")
                .contains("Caused by: java.lang.IllegalArgumentException: inner");

        Exception huge = new IllegalStateException("x".repeat(20_000));
        String cut = ErrorTexts.describe(huge);
        assertThat(cut).hasSize(ErrorTexts.MAX_ERROR_LENGTH).endsWith("(cut at 8000 characters)");

        Exception deepStack = deepStack(200);
        assertThat(ErrorTexts.describe(deepStack))
                .contains("\t... ")
                .contains("Caused by: java.lang.IllegalArgumentException: root")
                .hasSizeLessThan(ErrorTexts.MAX_ERROR_LENGTH);
    }

    /** An exception thrown {@code frames} calls deep, caused by one thrown as deep. */
    private static Exception deepStack(int frames) {
        if (frames == 0) {
            return new IllegalStateException("top", new IllegalArgumentException("root"));
        }
        return deepStack(frames - 1);
    }
}
