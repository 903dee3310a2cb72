package dev.locksmith.internal;

import java.util.Objects;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;

/**
 * Whether Citus hash-distributes one of locksmith's tables by a given column, and into how many
 * shards: looked up with one catalog read (two on Citus) the first time it is asked, then
 * remembered for the life of the object that holds this (a queue, an accounts repository). On
 * plain PostgreSQL the answer is 0 and the library runs its single-server statements.
 * <b>Internal: not API.</b>
 */
public final class Distribution {

    private final String table;
    private final String column;
    /** Shards of the table when Citus distributes it by {@link #column}, else 0; -1 until looked up. */
    private volatile int shards = -1;

    /**
     * @param dsl renders {@code table} with its settings (the schema mapping), so the name looked
     *     up is the one the statements use
     * @param table the table
     * @param column the distribution column that the library's statements route by
     */
    public Distribution(DSLContext dsl, Table<?> table, String column) {
        this.table = dsl.render(Objects.requireNonNull(table, "table"));
        this.column = Objects.requireNonNull(column, "column");
    }

    /** The table's oid as the server resolves its name (null when it does not exist). */
    public Field<Object> regclass() {
        return DSL.field("to_regclass({0})", Object.class, DSL.val(table));
    }

    /**
     * {@link #shards} as far as it is known without a statement: -1 until it has been looked up.
     */
    public int known() {
        return shards;
    }

    /** Whether Citus distributes the table by the column: see {@link #shards}. */
    public boolean distributed(DSLContext ctx) {
        return shards(ctx) > 0;
    }

    /**
     * How many shards Citus splits the table into, hash-distributed by the column, or 0 when it
     * is a plain table (no Citus, or Citus without locksmith's layout; a reference table or a
     * Citus-managed local table has one shard, and is used as on one server).
     *
     * @param ctx where to look, the first time
     */
    public int shards(DSLContext ctx) {
        int known = shards;
        if (known >= 0) {
            return known;
        }
        int found = Errors.translating(() -> {
            if (!Boolean.TRUE.equals(
                    ctx.select(DSL.field("to_regclass('pg_catalog.pg_dist_shard') IS NOT NULL", SQLDataType.BOOLEAN))
                            .fetchSingle()
                            .value1())) {
                return 0;
            }
            return ctx.select(DSL.count())
                    .from(DSL.table(DSL.name("pg_catalog", "pg_dist_shard")))
                    .join(DSL.table(DSL.name("pg_catalog", "pg_dist_partition")))
                    .using(DSL.field(DSL.name("logicalrelid")))
                    .where(DSL.field(DSL.name("logicalrelid")).eq(regclass()))
                    .and(DSL.field(DSL.name("partmethod")).eq(DSL.inline("h")))
                    .and(DSL.field("column_to_column_name(logicalrelid, partkey)", String.class)
                            .eq(DSL.val(column)))
                    .fetchSingle()
                    .value1();
        });
        shards = found;
        return found;
    }

    /**
     * A repository's set of statements for each layout: {@code plain} on one server, and the set
     * {@code forCitus} renders, once, where Citus distributes the table.
     *
     * @param <T> the statements' type
     * @param plain the single-server set, rendered already
     * @param forCitus renders the Citus set, on the first call that needs it
     */
    public <T> PerLayout<T> perLayout(T plain, Supplier<T> forCitus) {
        return new PerLayout<>(this, plain, forCitus);
    }

    /**
     * The statements for where the table is (see {@link #perLayout}).
     *
     * @param <T> the statements' type
     */
    public static final class PerLayout<T> {
        private final Distribution distribution;
        private final T plain;
        private final Supplier<T> forCitus;
        private volatile @Nullable T citus;

        private PerLayout(Distribution distribution, T plain, Supplier<T> forCitus) {
            this.distribution = distribution;
            this.plain = Objects.requireNonNull(plain, "plain");
            this.forCitus = Objects.requireNonNull(forCitus, "forCitus");
        }

        /** The set for the table's layout, looked up on {@code ctx} the first time. */
        public T on(DSLContext ctx) {
            if (!distribution.distributed(ctx)) {
                return plain;
            }
            T rendered = citus;
            if (rendered == null) {
                rendered = forCitus.get();
                citus = rendered;
            }
            return rendered;
        }
    }
}
