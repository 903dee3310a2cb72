package dev.locksmith.jobs.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RepeatedFailuresTest {

    @Test
    void theFirstFailureOfARunIsAWarningWithItsCauseAndTheRestAreDebug() {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.locksmith.test.RepeatedFailuresTest");
        logger.setLevel(Level.DEBUG);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        RepeatedFailures failures = new RepeatedFailures(logger, "vacuum of queue q");
        RuntimeException cause = new IllegalStateException("no auto-commit");

        failures.failed(cause, "vacuum of queue {} failed; retried in {} s", "q", 5);
        failures.failed(cause, "vacuum of queue {} failed; retried in {} s", "q", 5);
        failures.failed(cause, "vacuum of queue {} failed; retried in {} s", "q", 5);
        failures.succeeded();
        failures.failed(cause, "vacuum of queue {} failed; retried in {} s", "q", 5);

        assertThat(events.list)
                .extracting(ILoggingEvent::getLevel)
                .containsExactly(Level.WARN, Level.DEBUG, Level.DEBUG, Level.WARN);
        ILoggingEvent first = events.list.get(0);
        assertThat(first.getFormattedMessage()).isEqualTo("vacuum of queue q failed; retried in 5 s");
        assertThat(first.getThrowableProxy().getMessage()).isEqualTo("no auto-commit");
        assertThat(events.list.get(1).getFormattedMessage()).isEqualTo("vacuum of queue q failed again");
        assertThat(events.list.get(1).getThrowableProxy()).isNotNull();
        logger.detachAppender(events);
    }
}
