package dev.locksmith.jobs.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * The PgJDBC this build ships with has the private fields {@link PromptNotifications} sets (a
 * PgJDBC upgrade that renamed them would otherwise cost every LISTEN-woken pick-up a millisecond,
 * silently), and a connection of another driver is left as it is.
 */
class PromptNotificationsTest {

    @Test
    void thePgJdbcOfThisBuildHasTheFieldsItSets() {
        assertThat(PromptNotifications.reachesPgJdbc()).isTrue();
    }

    @Test
    void aConnectionOfAnotherDriverIsLeftAsItIs() {
        Connection other = (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("unwrap")) {
                        throw new SQLException("not a wrapper for " + args[0]);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        Runnable restore = PromptNotifications.apply(other);
        assertThatCode(restore::run).doesNotThrowAnyException();
    }
}
