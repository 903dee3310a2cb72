package dev.locksmith.audit;

import dev.locksmith.Locksmith;
import dev.locksmith.internal.Errors;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jooq.DSLContext;
import org.jooq.Record;

/**
 * What holds the MVCC horizon of the current database back, now: the sessions, replication slots,
 * prepared transactions and standbys whose oldest transaction VACUUM must keep visible, oldest
 * first. While one does, no VACUUM removes rows that died after it, so a queue's claimed and
 * finished rows pile up as dead rows and every claim steps over more of them.
 *
 * <p>Which of them hold this database back (PostgreSQL 13 to 18): sessions and prepared
 * transactions of this database (those of another database hold back only the shared catalogs,
 * not locksmith's tables); replication slots with an {@code xmin} and standbys with
 * {@code hot_standby_feedback}, which hold every database. A logical slot's
 * {@code catalog_xmin} holds back only the system catalogs and is not reported; nor are VACUUMs
 * (whose snapshot other VACUUMs ignore), parallel workers (their leader is), WAL senders of logical
 * replication, and the calling session itself.
 *
 * <p>A diagnostic: one read-only statement of plain SQL with bind values over
 * {@code pg_stat_activity}, {@code pg_replication_slots}, {@code pg_prepared_xacts} and
 * {@code pg_stat_replication}; it takes no lock. Any role may run it. Without the
 * {@code pg_read_all_stats} role (or superuser), other roles' sessions are still found, with their
 * pid, role, application and xmin, but their state, transaction start, statement and client are
 * hidden: the holder's {@link HorizonHolder#since()} and {@link HorizonHolder#age()} are then
 * empty.
 */
public final class HorizonReport {

    /** At most this many holders are reported, oldest first. */
    public static final int MAX_HOLDERS = 100;

    private static final int QUERY_TEXT_LIMIT = 1000;

    private static final String HIDDEN = "<insufficient privilege>";

    private static final String HOLDERS = """
            SELECT h.kind, h.pid, h.name, h.application, h.role, h.client, h.database, h.state, h.since,
                   h.query_start, h.query, h.xmin, age(h.xmin::text::xid) AS xmin_age,
                   extract(epoch FROM clock_timestamp() - h.since) * 1000 AS age_ms
            FROM (
                SELECT 'BACKEND' AS kind, a.pid, NULL::text AS name, a.application_name::text AS application,
                       a.usename::text AS role, host(a.client_addr) AS client, a.datname::text AS database,
                       a.state::text AS state, a.xact_start AS since, a.query_start, left(a.query, ?) AS query,
                       (CASE WHEN a.backend_xmin IS NULL OR age(a.backend_xid) > age(a.backend_xmin)
                             THEN a.backend_xid ELSE a.backend_xmin END)::text::bigint AS xmin
                FROM pg_stat_activity a
                WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
                  AND (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
                  AND a.backend_type IS DISTINCT FROM 'walsender'
                  AND (a.leader_pid IS NULL OR a.leader_pid = a.pid)
                  AND a.pid NOT IN (SELECT v.pid FROM pg_stat_progress_vacuum v)
                UNION ALL
                SELECT 'REPLICATION_SLOT', s.active_pid, s.slot_name::text, NULL, NULL, NULL, s.database::text,
                       CASE WHEN s.active THEN 'active' ELSE 'inactive' END, NULL, NULL, NULL, s.xmin::text::bigint
                FROM pg_replication_slots s
                WHERE s.xmin IS NOT NULL
                UNION ALL
                SELECT 'PREPARED_TRANSACTION', NULL, p.gid, NULL, p.owner::text, NULL, p.database::text, NULL,
                       p.prepared, NULL, NULL, p.transaction::text::bigint
                FROM pg_prepared_xacts p
                WHERE p.database = current_database()
                UNION ALL
                SELECT 'STANDBY', r.pid, NULL, r.application_name, r.usename::text, host(r.client_addr), NULL, r.state,
                       NULL, NULL, NULL, r.backend_xmin::text::bigint
                FROM pg_stat_replication r
                WHERE r.backend_xmin IS NOT NULL
                  AND r.pid IN (SELECT w.pid FROM pg_stat_activity w WHERE w.datid IS NULL)
            ) h
            ORDER BY xmin_age DESC, h.kind, h.pid
            LIMIT ?""";

    private final DSLContext dsl;

    /**
     * A report run on {@code locksmith}'s context.
     *
     * @param locksmith the environment whose database is inspected
     */
    public HorizonReport(Locksmith locksmith) {
        this(locksmith.dsl());
    }

    /**
     * A report reading through {@code dsl}.
     *
     * @param dsl any {@code DSLContext} on the database to inspect; each call borrows one connection
     *     for one statement (or runs in the transaction the context is in)
     */
    public HorizonReport(DSLContext dsl) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
    }

    /**
     * What holds this database's horizon back now, the oldest first (greatest
     * {@link HorizonHolder#xminAge()}), at most {@value #MAX_HOLDERS}.
     *
     * @return the holders; empty when nothing holds it back beyond running transactions of the
     *     calling session
     * @throws dev.locksmith.exception.DatabaseException when the statement fails
     */
    public List<HorizonHolder> holders() {
        List<HorizonHolder> result = new ArrayList<>();
        for (Record r : Errors.translating(
                () -> dsl.resultQuery(HOLDERS, QUERY_TEXT_LIMIT, MAX_HOLDERS).fetch())) {
            Integer pid = r.get("pid", Integer.class);
            Number ageMs = r.get("age_ms", Number.class);
            Number xminAge = r.get("xmin_age", Number.class);
            result.add(new HorizonHolder(
                    HorizonHolder.Kind.valueOf(r.get("kind", String.class)),
                    pid == null ? OptionalInt.empty() : OptionalInt.of(pid),
                    text(r, "name"),
                    text(r, "application"),
                    text(r, "role"),
                    text(r, "client"),
                    text(r, "database"),
                    text(r, "state"),
                    Optional.ofNullable(r.get("since", OffsetDateTime.class)),
                    Optional.ofNullable(r.get("query_start", OffsetDateTime.class)),
                    text(r, "query").filter(q -> !HIDDEN.equals(q)),
                    r.get("xmin", Long.class),
                    xminAge == null ? 0 : Math.max(0, xminAge.longValue()),
                    ageMs == null ? Optional.empty() : Optional.of(Duration.ofMillis(Math.max(0, ageMs.longValue())))));
        }
        return List.copyOf(result);
    }

    /**
     * The oldest holder now: the first of {@link #holders()}.
     *
     * @return it, or empty when nothing holds the horizon back
     * @throws dev.locksmith.exception.DatabaseException when the statement fails
     */
    public Optional<HorizonHolder> oldest() {
        return holders().stream().findFirst();
    }

    private static Optional<String> text(Record r, String column) {
        return Optional.ofNullable(r.get(column, String.class));
    }
}
