package dev.locksmith.jobs.engine;

import dev.locksmith.exception.LocksmithException;
import dev.locksmith.internal.Errors;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record3;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.types.DayToSecond;

/**
 * The prepared transactions of {@code TwoPhaseWorker}: their global identifiers (gids), the
 * statements that prepare, commit and roll them back, and the look-up of those left behind.
 *
 * <p><b>The gid</b> is {@code locksmith:<system identifier>:<database oid>:<schema>:<job id>}:
 * the server's {@code pg_control_system().system_identifier} in hex (unique per cluster, kept
 * by replicas), the database's oid, the schema of the {@code jobs} table and the job's id. Gids
 * are unique across a whole PostgreSQL cluster, not per database, so the database and schema
 * must be in them; the system identifier makes the gid, which is also the side effect's
 * idempotency key, differ between two clusters whose databases happen to share an oid and job
 * ids (two services sending to one payment provider). Every part is fixed by the job, so every
 * attempt of a job prepares under the same gid, and an attempt repeated after an ambiguous
 * failure reaches the external system with the key it already knows. At most
 * {@code 10 + 16 + 1 + 10 + 1 + 63 + 1 + 19 = 121} bytes; PostgreSQL allows 199.
 *
 * <p><b>Why the statements are rendered with an inline literal.</b> {@code PREPARE TRANSACTION},
 * {@code COMMIT PREPARED} and {@code ROLLBACK PREPARED} take the gid as a string literal, not an
 * expression: it cannot be a bind value. Every gid sent is one this class made, and it is checked
 * against {@link #GID}, whose characters are digits, lower-case letters, {@code _} and
 * {@code :}, before jOOQ renders it with {@link DSL#inline(String)} (which would escape quotes,
 * if the pattern let one through). Nothing else is ever put into these statements.
 */
public final class PreparedTransactions {

    /** Every gid of this library starts with it. */
    static final String LIBRARY_PREFIX = "locksmith:";

    /** A gid of this library: system identifier (hex), database oid, schema, job id. */
    static final Pattern GID =
            Pattern.compile("locksmith:([0-9a-f]{1,16}):([0-9]{1,10}):([a-z_][a-z0-9_]{0,62}):([1-9][0-9]{0,18})");

    /** {@code undefined_object}: {@code COMMIT PREPARED} of a gid that is not (or no longer) prepared. */
    static final String UNDEFINED_OBJECT = "42704";

    /** {@code object_not_in_prerequisite_state}: another session is finishing this gid right now. */
    static final String OBJECT_IN_USE = "55000";

    /** {@code out_of_memory}, which {@code PREPARE TRANSACTION} raises when every slot is in use. */
    static final String OUT_OF_MEMORY = "53200";

    private static final Table<?> PG_PREPARED_XACTS = DSL.table(DSL.name("pg_catalog", "pg_prepared_xacts"));
    private static final Field<String> XACT_GID = DSL.field(DSL.name("gid"), SQLDataType.VARCHAR);
    private static final Field<OffsetDateTime> XACT_PREPARED =
            DSL.field(DSL.name("prepared"), SQLDataType.TIMESTAMPWITHTIMEZONE);
    private static final Field<String> XACT_DATABASE = DSL.field(DSL.name("database"), SQLDataType.VARCHAR);

    /** {@code locksmith:<system identifier>:<database oid>:<schema>:}, this database's and schema's gids. */
    private final String prefix;

    private final int maxPreparedTransactions;

    private PreparedTransactions(String prefix, int maxPreparedTransactions) {
        this.prefix = prefix;
        this.maxPreparedTransactions = maxPreparedTransactions;
    }

    /** A prepared transaction of this library left in {@code pg_prepared_xacts}. */
    public record Prepared(String gid, long jobId, OffsetDateTime preparedAt) {}

    /**
     * Reads what the gids of {@code schema} in the database of {@code dsl} start with, in one
     * statement, and refuses a server that cannot prepare transactions.
     *
     * @throws IllegalStateException when {@code max_prepared_transactions} is 0, with how to set it
     */
    public static PreparedTransactions detect(DSLContext dsl, String schema) {
        Field<String> maxPrepared =
                DSL.function("current_setting", SQLDataType.VARCHAR, DSL.inline("max_prepared_transactions"));
        // A composite-returning function's column: no DSL for it, and nothing is interpolated.
        Field<Long> systemIdentifier =
                DSL.field("(pg_catalog.pg_control_system()).system_identifier", SQLDataType.BIGINT);
        Field<Long> databaseOid =
                DSL.field(DSL.select(DSL.field(DSL.name("oid")).cast(SQLDataType.BIGINT))
                        .from(DSL.table(DSL.name("pg_catalog", "pg_database")))
                        .where(DSL.field(DSL.name("datname"), SQLDataType.VARCHAR)
                                .eq(DSL.function("current_database", SQLDataType.VARCHAR))));
        Record3<String, Long, Long> row = Errors.translating(
                () -> dsl.select(maxPrepared, systemIdentifier, databaseOid).fetchSingle());
        int maxSetting = Integer.parseInt(row.value1().trim());
        requireEnabled(maxSetting);
        return new PreparedTransactions(
                LIBRARY_PREFIX + Long.toHexString(row.value2()) + ":" + row.value3() + ":"
                        + dev.locksmith.internal.SchemaMapping.requireName(schema) + ":",
                maxSetting);
    }

    public static void requireEnabled(int maxPreparedTransactions) {
        if (maxPreparedTransactions <= 0) {
            throw new IllegalStateException("TwoPhaseWorker needs prepared transactions, but this PostgreSQL server "
                    + "has max_prepared_transactions = " + maxPreparedTransactions + " (the default, which disables "
                    + "PREPARE TRANSACTION). Set max_prepared_transactions to at least the number of two-phase worker "
                    + "threads of every application on this server (for example 100: "
                    + "ALTER SYSTEM SET max_prepared_transactions = 100, or max_prepared_transactions = 100 in "
                    + "postgresql.conf, or postgres -c max_prepared_transactions=100) and restart the server: it takes "
                    + "effect only at server start, and a standby needs at least its primary's value");
        }
    }

    /** {@return the server's {@code max_prepared_transactions}, at least 1} */
    public int maxPreparedTransactions() {
        return maxPreparedTransactions;
    }

    /** {@return what every gid of this database and schema starts with} */
    public String prefix() {
        return prefix;
    }

    /** {@return the gid that names {@code jobId}: also the side effect's idempotency key} */
    public String gid(long jobId) {
        return checked(prefix + jobId);
    }

    /** The job id a gid of this database and schema names; empty for any other gid. */
    public OptionalLong jobId(String gid) {
        if (!gid.startsWith(prefix)) {
            return OptionalLong.empty();
        }
        Matcher m = GID.matcher(gid);
        return m.matches() ? OptionalLong.of(Long.parseLong(m.group(4))) : OptionalLong.empty();
    }

    /**
     * {@code PREPARE TRANSACTION}: ends the open transaction of {@code tx}'s connection, keeping
     * its locks and writes in a prepared transaction that no session owns.
     */
    public void prepare(DSLContext tx, String gid) {
        Errors.translating(() -> tx.execute("PREPARE TRANSACTION {0}", DSL.inline(checked(gid))));
    }

    /** {@code COMMIT PREPARED}; {@code dsl} must be in auto-commit mode (it cannot run in a transaction block). */
    public void commit(DSLContext dsl, String gid) {
        Errors.translating(() -> dsl.execute("COMMIT PREPARED {0}", DSL.inline(checked(gid))));
    }

    /** {@code ROLLBACK PREPARED}; {@code dsl} must be in auto-commit mode. */
    public void rollback(DSLContext dsl, String gid) {
        Errors.translating(() -> dsl.execute("ROLLBACK PREPARED {0}", DSL.inline(checked(gid))));
    }

    /**
     * This database's and schema's prepared transactions that were prepared at least {@code age}
     * ago (database clock), oldest first. Reading {@code pg_prepared_xacts} takes no lock.
     */
    public List<Prepared> olderThan(DSLContext dsl, Duration age) {
        return Errors.translating(() -> dsl.select(XACT_GID, XACT_PREPARED)
                        .from(PG_PREPARED_XACTS)
                        .where(XACT_DATABASE.eq(DSL.function("current_database", SQLDataType.VARCHAR)))
                        .and(XACT_GID.startsWith(prefix))
                        .and(XACT_PREPARED.le(DSL.currentOffsetDateTime().minus(DSL.val(DayToSecond.valueOf(age)))))
                        .orderBy(XACT_PREPARED)
                        .fetch())
                .stream()
                .flatMap(r -> {
                    OptionalLong id = jobId(r.value1());
                    return id.isPresent()
                            ? java.util.stream.Stream.of(new Prepared(r.value1(), id.getAsLong(), r.value2()))
                            : java.util.stream.Stream.empty();
                })
                .toList();
    }

    /**
     * Whether {@code failure} of {@code COMMIT PREPARED} or {@code ROLLBACK PREPARED} means that
     * the gid was not (or no longer) prepared, or is being finished by another session right now:
     * someone else settled it.
     */
    public static boolean settledElsewhere(LocksmithException failure) {
        return UNDEFINED_OBJECT.equals(failure.sqlState()) || OBJECT_IN_USE.equals(failure.sqlState());
    }

    /**
     * Whether {@code failure} of {@code PREPARE TRANSACTION} means that all
     * {@code max_prepared_transactions} slots are taken: a matter of the server's capacity (or of
     * a resolver that has not caught up), not of the job.
     */
    public static boolean slotsExhausted(Throwable failure) {
        return failure instanceof LocksmithException e && OUT_OF_MEMORY.equals(e.sqlState());
    }

    private static String checked(String gid) {
        if (!GID.matcher(gid).matches()) {
            throw new IllegalStateException("not a gid of locksmith: " + gid);
        }
        return gid;
    }
}
