package dev.locksmith.internal;

import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;

/**
 * The values of one execution of a {@link RenderedQuery}, set by parameter name. Each setter
 * says how the value goes over JDBC, matching the cast jOOQ rendered around the placeholder.
 * <b>Internal: not API.</b> Not thread-safe; use one per execution.
 */
public final class Binds {

    @FunctionalInterface
    interface Setter {
        void set(PreparedStatement statement, int index) throws SQLException;
    }

    private final RenderedQuery query;
    private final Setter[] setters;

    Binds(RenderedQuery query) {
        this.query = query;
        this.setters = new Setter[query.parameterCount()];
    }

    RenderedQuery query() {
        return query;
    }

    private Binds put(String name, Setter setter) {
        setters[query.nameIndex(name)] = setter;
        return this;
    }

    /** A {@code varchar}/{@code text} value; null binds SQL NULL. */
    public Binds set(String name, String value) {
        return put(name, value == null
                ? (s, i) -> s.setNull(i, Types.VARCHAR)
                : (s, i) -> s.setString(i, value));
    }

    /** A {@code bigint} value. */
    public Binds set(String name, long value) {
        return put(name, (s, i) -> s.setLong(i, value));
    }

    /** An {@code integer} value. */
    public Binds set(String name, int value) {
        return put(name, (s, i) -> s.setInt(i, value));
    }

    /** A {@code smallint} value. */
    public Binds set(String name, short value) {
        return put(name, (s, i) -> s.setShort(i, value));
    }

    /** A {@code double precision} value. */
    public Binds set(String name, double value) {
        return put(name, (s, i) -> s.setDouble(i, value));
    }

    /** A {@code numeric} value; null binds SQL NULL. */
    public Binds set(String name, BigDecimal value) {
        return put(name, value == null
                ? (s, i) -> s.setNull(i, Types.NUMERIC)
                : (s, i) -> s.setBigDecimal(i, value));
    }

    /**
     * An {@code interval}, sent as whole microseconds (PostgreSQL's resolution; finer parts are
     * dropped) in PostgreSQL's interval input syntax, for a placeholder jOOQ rendered as
     * {@code cast(? as interval ...)}. The public calls validate their durations first; this
     * check is the backstop that keeps an oversized one from overflowing here.
     *
     * @throws IllegalArgumentException when {@code value} exceeds {@link Durations#MAX}
     */
    public Binds setInterval(String name, Duration value) {
        Durations.atMost(name, value);
        String micros = Math.multiplyExact(value.getSeconds(), 1_000_000L) + value.getNano() / 1000 + " microseconds";
        return put(name, (s, i) -> s.setString(i, micros));
    }

    /** A {@code jsonb} document as text, for a placeholder jOOQ rendered as {@code cast(? as jsonb)}. */
    public Binds setJson(String name, String json) {
        return set(name, json);
    }

    /** A {@code bigint[]}. */
    public Binds setLongs(String name, Collection<Long> values) {
        Object[] array = values.toArray();
        return put(name, (s, i) -> s.setArray(i, s.getConnection().createArrayOf("int8", array)));
    }

    /** A {@code double precision[]}. */
    public Binds setDoubles(String name, double[] values) {
        Object[] array = Arrays.stream(values).boxed().toArray();
        return put(name, (s, i) -> s.setArray(i, s.getConnection().createArrayOf("float8", array)));
    }

    /** An {@code integer[]}. */
    public Binds setInts(String name, Collection<Integer> values) {
        Object[] array = values.toArray();
        return put(name, (s, i) -> s.setArray(i, s.getConnection().createArrayOf("int4", array)));
    }

    /** A {@code uuid} value; null binds SQL NULL. */
    public Binds set(String name, java.util.UUID value) {
        return put(name, value == null
                ? (s, i) -> s.setNull(i, Types.OTHER)
                : (s, i) -> s.setObject(i, value));
    }

    /** A {@code uuid[]}. */
    public Binds setUuids(String name, Collection<java.util.UUID> values) {
        Object[] array = values.toArray();
        return put(name, (s, i) -> s.setArray(i, s.getConnection().createArrayOf("uuid", array)));
    }

    /** A {@code varchar[]}/{@code text[]}. */
    public Binds setStrings(String name, Collection<String> values) {
        Object[] array = values.toArray();
        return put(name, (s, i) -> s.setArray(i, s.getConnection().createArrayOf("varchar", array)));
    }

    Setter setter(int nameIndex) {
        return setters[nameIndex];
    }

    void requireComplete() {
        for (int i = 0; i < setters.length; i++) {
            if (setters[i] == null) {
                throw new IllegalStateException("parameter " + query.name(i) + " is not bound in " + query.sql());
            }
        }
    }
}
