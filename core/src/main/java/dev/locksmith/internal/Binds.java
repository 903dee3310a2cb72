package dev.locksmith.internal;

import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.Collection;
import java.util.UUID;
import org.jooq.DataType;
import org.jooq.Param;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PGobject;

/**
 * The values of one execution of a {@link RenderedQuery}, set by parameter name. Each setter
 * says how the value goes to the server, matching the cast jOOQ rendered around the placeholder;
 * the same JDBC call sends it whether the statement runs through jOOQ or raw JDBC.
 * <b>Internal: not API.</b> Not thread-safe; use one per execution.
 */
public final class Binds {

    /**
     * How a value is sent: the JDBC call that sends it, in both modes (through jOOQ, a
     * {@link KindBinding} makes the same call), and the jOOQ type that renders it as a literal
     * when a listener renders the statement inlined.
     */
    @SuppressWarnings("ImmutableEnumChecker") // jOOQ's data types are immutable in fact, though not annotated
    enum Kind {
        VARCHAR(SQLDataType.VARCHAR, Types.VARCHAR),
        BIGINT(SQLDataType.BIGINT, Types.BIGINT),
        INTEGER(SQLDataType.INTEGER, Types.INTEGER),
        SMALLINT(SQLDataType.SMALLINT, Types.SMALLINT),
        DOUBLE(SQLDataType.DOUBLE, Types.DOUBLE),
        NUMERIC(SQLDataType.NUMERIC, Types.NUMERIC),
        UUID(SQLDataType.UUID, Types.OTHER),
        BIGINT_ARRAY(SQLDataType.BIGINT.array(), Types.ARRAY),
        INTEGER_ARRAY(SQLDataType.INTEGER.array(), Types.ARRAY),
        DOUBLE_ARRAY(SQLDataType.DOUBLE.array(), Types.ARRAY),
        UUID_ARRAY(SQLDataType.UUID.array(), Types.ARRAY),
        VARCHAR_ARRAY(SQLDataType.VARCHAR.array(), Types.ARRAY);

        private final DataType<?> literalType;
        private final int sqlType;
        // A Val asks its type for notNull() (or null_() for a null value), which constructs a new
        // data type unless the type already says so: a quarter of the client CPU of a statement
        // when the types were built per value. Built once, the two are returned as they are.
        private final DataType<Object> notNullType;
        private final DataType<Object> nullableType;

        Kind(DataType<?> literalType, int sqlType) {
            this.literalType = literalType;
            this.sqlType = sqlType;
            DataType<Object> bindType = SQLDataType.OTHER.asConvertedDataType(new KindBinding(this));
            this.notNullType = bindType.notNull();
            this.nullableType = bindType.null_();
        }

        /** {@code value} as a jOOQ bind value that renders as a bare placeholder and binds as {@link #set} does. */
        Param<Object> param(Object value) {
            return DSL.val(value, value == null ? nullableType : notNullType);
        }

        /** {@code value} as a literal of its SQL type. */
        @SuppressWarnings("unchecked")
        Param<Object> literal(Object value) {
            return DSL.inline(value, (DataType<Object>) literalType);
        }

        void set(PreparedStatement statement, int index, Object value) throws SQLException {
            if (value == null) {
                statement.setNull(index, sqlType);
                return;
            }
            switch (this) {
                case VARCHAR -> statement.setString(index, (String) value);
                case BIGINT -> statement.setLong(index, (Long) value);
                case INTEGER -> statement.setInt(index, (Integer) value);
                case SMALLINT -> statement.setShort(index, (Short) value);
                case DOUBLE -> statement.setDouble(index, (Double) value);
                case NUMERIC -> statement.setBigDecimal(index, (BigDecimal) value);
                case UUID -> statement.setObject(index, value);
                // PgJDBC sends a Java array of numbers or strings given to setObject in binary
                // (int8[], int4[], float8[], varchar[]): no text to build, escape and parse again
                // on the server, where createArrayOf always builds the array's text form (a
                // third of a completing thread's CPU time went to escaping it, character by
                // character). In the simple query mode it falls back to that text itself.
                case BIGINT_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, VARCHAR_ARRAY -> statement.setObject(index, value);
                // uuid[] has no binary form in PgJDBC: its text, written here as createArrayOf
                // would write it but without escaping what a UUID's text never holds
                case UUID_ARRAY -> statement.setObject(index, uuidArray((UUID[]) value));
            }
        }

        /** {@code uuids} as a PostgreSQL {@code uuid[]} in text form, the type PgJDBC's createArrayOf gives it. */
        private static PGobject uuidArray(UUID[] uuids) throws SQLException {
            StringBuilder text = new StringBuilder(2 + uuids.length * 37);
            text.append('{');
            for (int i = 0; i < uuids.length; i++) {
                if (i > 0) {
                    text.append(',');
                }
                text.append(uuids[i] == null ? "NULL" : uuids[i].toString());
            }
            PGobject array = new PGobject();
            array.setType("uuid[]");
            array.setValue(text.append('}').toString());
            return array;
        }
    }

    private final RenderedQuery query;
    private final Kind[] kinds;
    private final Object[] values;

    Binds(RenderedQuery query) {
        this.query = query;
        this.kinds = new Kind[query.parameterCount()];
        this.values = new Object[query.parameterCount()];
    }

    RenderedQuery query() {
        return query;
    }

    private Binds put(String name, Kind kind, @Nullable Object value) {
        int index = query.nameIndex(name);
        kinds[index] = kind;
        values[index] = value;
        return this;
    }

    /** A {@code varchar}/{@code text} value; null binds SQL NULL. */
    public Binds set(String name, @Nullable String value) {
        return put(name, Kind.VARCHAR, value);
    }

    /** A {@code bigint} value. */
    public Binds set(String name, long value) {
        return put(name, Kind.BIGINT, value);
    }

    /** An {@code integer} value. */
    public Binds set(String name, int value) {
        return put(name, Kind.INTEGER, value);
    }

    /** A {@code smallint} value. */
    public Binds set(String name, short value) {
        return put(name, Kind.SMALLINT, value);
    }

    /** A {@code double precision} value. */
    public Binds set(String name, double value) {
        return put(name, Kind.DOUBLE, value);
    }

    /** A {@code numeric} value; null binds SQL NULL. */
    public Binds set(String name, BigDecimal value) {
        return put(name, Kind.NUMERIC, value);
    }

    /**
     * An {@code interval}, sent as whole microseconds (PostgreSQL's resolution; finer parts are
     * dropped) in PostgreSQL's interval input syntax, for a placeholder jOOQ rendered as
     * {@code cast(? as interval ...)}. The public calls validate their durations first; this
     * check is the backstop that keeps an oversized one from overflowing here.
     *
     * <p>Written as a time, {@code [-]H:MM:SS.ffffff} ({@code 1:00:00.000000} for an hour), not as
     * {@code N microseconds}: PostgreSQL 13 reads the number before a unit as a 32-bit integer, so
     * from 2^31 microseconds (under 36 minutes) on that form fails there with "interval field value
     * out of range" (14 and later read 64 bits). The hours of a time are 32-bit there too, which
     * {@link Durations#MAX} stays far below. Hours, not days: a day is a calendar day to
     * {@code timestamptz} arithmetic, 23 or 25 hours across a daylight saving change.
     *
     * @throws IllegalArgumentException when {@code value} exceeds {@link Durations#MAX}
     */
    public Binds setInterval(String name, Duration value) {
        Durations.atMost(name, value);
        return put(name, Kind.VARCHAR, intervalText(value));
    }

    /** {@code value} in whole microseconds as {@code [-]H:MM:SS.ffffff}; see {@link #setInterval}. */
    static String intervalText(Duration value) {
        long micros = Math.addExact(Math.multiplyExact(value.getSeconds(), 1_000_000L), value.getNano() / 1000);
        long abs = Math.abs(micros);
        long seconds = abs / 1_000_000L;
        StringBuilder text = new StringBuilder(24);
        if (micros < 0) {
            text.append('-');
        }
        text.append(seconds / 3600).append(':');
        twoDigits(text, seconds / 60 % 60).append(':');
        twoDigits(text, seconds % 60).append('.');
        String fraction = Long.toString(abs % 1_000_000L);
        for (int i = fraction.length(); i < 6; i++) {
            text.append('0');
        }
        return text.append(fraction).toString();
    }

    private static StringBuilder twoDigits(StringBuilder text, long value) {
        return text.append(value < 10 ? "0" : "").append(value);
    }

    /** A {@code jsonb} document as text, for a placeholder jOOQ rendered as {@code cast(? as jsonb)}. */
    public Binds setJson(String name, String json) {
        return set(name, json);
    }

    /** A {@code bigint[]}. */
    public Binds setLongs(String name, Collection<Long> values) {
        return put(name, Kind.BIGINT_ARRAY, values.toArray(Long[]::new));
    }

    /** A {@code double precision[]}. */
    public Binds setDoubles(String name, double[] values) {
        Double[] boxed = new Double[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return put(name, Kind.DOUBLE_ARRAY, boxed);
    }

    /** An {@code integer[]}. */
    public Binds setInts(String name, Collection<Integer> values) {
        return put(name, Kind.INTEGER_ARRAY, values.toArray(Integer[]::new));
    }

    /** A {@code uuid} value; null binds SQL NULL. */
    public Binds set(String name, UUID value) {
        return put(name, Kind.UUID, value);
    }

    /** A {@code uuid[]}. */
    public Binds setUuids(String name, Collection<UUID> values) {
        return put(name, Kind.UUID_ARRAY, values.toArray(UUID[]::new));
    }

    /** A {@code varchar[]}/{@code text[]}; null elements are SQL NULLs. */
    public Binds setStrings(String name, Collection<? extends @Nullable String> values) {
        return put(name, Kind.VARCHAR_ARRAY, values.toArray(String[]::new));
    }

    /** The value of parameter {@code nameIndex} as a jOOQ bind value. */
    Param<?> param(int nameIndex) {
        return kinds[nameIndex].param(values[nameIndex]);
    }

    /** Sets the value of parameter {@code nameIndex} at {@code index} of a JDBC statement. */
    void set(PreparedStatement statement, int index, int nameIndex) throws SQLException {
        kinds[nameIndex].set(statement, index, values[nameIndex]);
    }

    /** The value of parameter {@code nameIndex} as given (arrays as Java arrays). */
    Object value(int nameIndex) {
        return values[nameIndex];
    }

    void requireComplete() {
        for (int i = 0; i < kinds.length; i++) {
            if (kinds[i] == null) {
                throw new IllegalStateException("parameter " + query.name(i) + " is not bound in " + query.sql());
            }
        }
    }
}
