package dev.locksmith;

import dev.locksmith.exception.SerializationFailureException;
import org.jspecify.annotations.Nullable;

/** Transaction isolation levels, set with {@code SET TRANSACTION} as a transaction's first statement. */
public enum Isolation {
    /** PostgreSQL's default; no statement is issued. */
    READ_COMMITTED(null),
    /** Snapshot isolation; may fail with {@link SerializationFailureException} on write conflicts. */
    REPEATABLE_READ("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
    /** Serializable snapshot isolation; may fail with {@link SerializationFailureException}. */
    SERIALIZABLE("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");

    private final @Nullable String statement;

    Isolation(@Nullable String statement) {
        this.statement = statement;
    }

    /** The fixed statement that selects this level, or null for the default. */
    @Nullable
    String statement() {
        return statement;
    }
}
