package dev.locksmith.exception;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.internal.Errors;
import java.sql.SQLException;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The mapping table; the integration tests provoke each state for real. */
class PgErrorsTest {

    @ParameterizedTest
    @CsvSource({
        "40P01, DeadlockException",
        "40001, SerializationFailureException",
        "55P03, LockNotAvailableException",
        "23505, UniqueViolationException",
        "23514, CheckViolationException",
        "23503, ConstraintViolationException",
        "57014, StatementTimeoutException",
        "25P02, TransactionAbortedException",
        "57P01, ConnectionTerminatedException",
        "08006, ConnectionTerminatedException",
        "42P01, DatabaseException"
    })
    void mapsSqlStateThroughJooqWrapping(String state, String type) {
        SQLException sql = new SQLException("boom " + state, state);
        LocksmithException translated = PgErrors.translate(new DataAccessException("wrapped", sql));
        assertThat(translated.getClass().getSimpleName()).isEqualTo(type);
        assertThat(translated.sqlState()).isEqualTo(state);
        assertThat(translated.getCause())
                .isInstanceOf(DataAccessException.class)
                .hasCause(sql);
    }

    @Test
    void aMissingLocksmithTableNamesTheModuleToApplyAndOtherMissingTablesStayPlain() {
        LocksmithException missing = PgErrors.translate(
                new SQLException("ERROR: relation \"billing_locks.account_transfers\" does not exist", "42P01"));
        assertThat(missing).isInstanceOfSatisfying(SchemaNotAppliedException.class, e -> {
            assertThat(e.table()).isEqualTo("billing_locks.account_transfers");
            assertThat(e.module()).isEqualTo("ACCOUNTS");
            assertThat(e)
                    .hasMessageContaining("SchemaModule.ACCOUNTS")
                    .hasMessageContaining("db/locksmith/accounts.xml");
        });
        assertThat(PgErrors.translate(new SQLException("ERROR: relation \"jobs\" does not exist", "42P01")))
                .isInstanceOfSatisfying(
                        SchemaNotAppliedException.class,
                        e -> assertThat(e.module()).isEqualTo("QUEUE"));
        assertThat(PgErrors.translate(
                        new SQLException("ERROR: relation \"locksmith.schedules\" does not exist", "42P01")))
                .isInstanceOfSatisfying(
                        SchemaNotAppliedException.class,
                        e -> assertThat(e.module()).isEqualTo("QUEUE"));
        assertThat(PgErrors.translate(new SQLException("ERROR: relation \"public.orders\" does not exist", "42P01")))
                .isExactlyInstanceOf(DatabaseException.class);
    }

    @Test
    void transientOnlyForRetryableStates() {
        assertThat(PgErrors.translate(new SQLException("x", "40P01"))).isInstanceOf(TransientLocksmithException.class);
        assertThat(PgErrors.translate(new SQLException("x", "40001"))).isInstanceOf(TransientLocksmithException.class);
        assertThat(PgErrors.translate(new SQLException("x", "55P03"))).isInstanceOf(TransientLocksmithException.class);
        assertThat(PgErrors.translate(new SQLException("x", "23505")))
                .isNotInstanceOf(TransientLocksmithException.class);
    }

    @Test
    void leavesLocksmithExceptionsAndCallerExceptionsAlone() {
        LocksmithException own = new LocksmithException("domain") {};
        assertThat(PgErrors.translate(own)).isSameAs(own);
        IllegalStateException callers = new IllegalStateException("not ours");
        assertThat(Errors.isDatabaseError(callers)).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Errors.translating(() -> {
                    throw callers;
                }))
                .isSameAs(callers);
    }
}
