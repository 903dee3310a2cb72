package dev.locksmith.internal;

import dev.locksmith.ExecutionMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jooq.Configuration;
import org.jooq.Context;
import org.jooq.Cursor;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Query;
import org.jooq.Record;
import org.jooq.RenderContext.CastMode;
import org.jooq.ResultQuery;
import org.jooq.SQL;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.CustomQueryPart;
import org.jooq.impl.DSL;

/**
 * A statement written in jOOQ's DSL on the generated tables, rendered once, and executed many
 * times on the caller's connection with fresh bind values. <b>Internal: not API.</b>
 *
 * <p>Why: building and rendering a jOOQ query costs tens to hundreds of microseconds of client
 * CPU per execution (about 100 us for the pool's acquisition statement on this project's
 * machines), which on a small server sharing cores with its clients is the difference between
 * the library and hand-written JDBC. The hot statements of the repositories are therefore
 * rendered when a repository is constructed, with the {@link DSLContext} given to it (so its
 * dialect, quoting and schema mapping apply, over {@link PinnedSettings#forRendering the few
 * settings the SQL depends on}), and executed on the connection of the {@code DSLContext} passed
 * to each call, inside the caller's transaction when there is one. The SQL text is identical on
 * every execution, so PgJDBC server-prepares it after a few uses and PostgreSQL can keep a
 * generic plan.
 *
 * <p>How each execution runs is the {@link ExecutionMode} of the construction context:
 * <ul>
 *   <li>{@link ExecutionMode#JOOQ} (the default): as a jOOQ query on the caller's
 *       {@code Configuration}, so its {@code ExecuteListener}s see the SQL and the bind values,
 *       and its connection provider and execution settings apply; when that configuration has
 *       nothing that would see or change the execution ({@link JooqObservers}), the same
 *       statement goes straight to a connection of its connection provider. The query is a
 *       {@link CustomQueryPart} that writes the pre-rendered SQL around the bind values, so
 *       jOOQ neither parses a template nor renders a DSL tree; the result columns are declared
 *       (from the DSL query), so jOOQ does not read the driver's result metadata; rows are read
 *       from the JDBC {@code ResultSet} under jOOQ's cursor, not copied into records; the bind
 *       types are built once ({@link Binds}); every statement returns rows (see
 *       {@link #execute}). Profiled against a mocked connection (jOOQ's own work only), acquire
 *       plus release then costs about 8 us of client CPU through jOOQ, 1 us through raw JDBC;
 *       the metadata, the per-value types and jOOQ's guess at statements without a result had
 *       each added a good part of that again.</li>
 *   <li>{@link ExecutionMode#RAW_JDBC}: a {@code PreparedStatement} on the caller's connection,
 *       bypassing jOOQ's execution and its listeners.</li>
 * </ul>
 *
 * <p>Every bind value of the query must be a named parameter ({@code DSL.param("name", type)});
 * everything else is inlined ({@code DSL.inline}). A name may occur several times and is bound
 * once.
 */
public final class RenderedQuery {

    private static final Field<?>[] NO_FIELDS = {};

    private final String sql;
    /** {@link #sql} split at its placeholders: one more chunk than placeholders. */
    private final String[] chunks;

    private final String[] names;
    private final int[] nameOfPosition;
    /** The result columns, declared to jOOQ so that it does not read the driver's metadata. */
    private final Field<?>[] fields;

    private final ExecutionMode mode;

    private RenderedQuery(
            String sql, String[] chunks, String[] names, int[] nameOfPosition, Field<?>[] fields, ExecutionMode mode) {
        this.sql = sql;
        this.chunks = chunks;
        this.names = names;
        this.nameOfPosition = nameOfPosition;
        this.fields = fields;
        this.mode = mode;
    }

    /**
     * Renders {@code query} with {@code dsl}'s settings (those the SQL depends on pinned), to be
     * executed in {@code dsl}'s {@link ExecutionMode}.
     *
     * @throws IllegalArgumentException when the query has a bind value that is not a named
     *     parameter
     */
    public static RenderedQuery of(DSLContext dsl, Query query) {
        Objects.requireNonNull(dsl, "dsl");
        Objects.requireNonNull(query, "query");
        DSLContext renderer = DSL.using(dsl.configuration().derive(PinnedSettings.forRendering(dsl.settings())));
        RenderedQuery rendered = parse(
                renderer.renderNamedParams(query),
                query instanceof ResultQuery<?> result ? result.fields() : NO_FIELDS,
                Environment.of(dsl).executionMode());
        for (Param<?> param : query.getParams().values()) {
            if (!param.isInline()
                    && param.getParamName() != null
                    && !Arrays.asList(rendered.names).contains(param.getParamName())) {
                throw new IllegalStateException(
                        "parameter " + param.getParamName() + " was not rendered as one: " + rendered.sql);
            }
        }
        return rendered;
    }

    /** {@link #parse(String, Field[], ExecutionMode)} of a statement without result columns, run through jOOQ. */
    static RenderedQuery parse(String named) {
        return parse(named, NO_FIELDS, ExecutionMode.JOOQ);
    }

    /**
     * Turns jOOQ's named-parameter rendering ({@code :name}) into JDBC placeholders, recording
     * which name each placeholder binds. Quoted identifiers, string literals and {@code ::}
     * casts are passed over.
     */
    static RenderedQuery parse(String named, Field<?>[] fields, ExecutionMode mode) {
        StringBuilder sql = new StringBuilder(named.length());
        List<String> chunks = new ArrayList<>();
        int chunkStart = 0;
        Map<String, Integer> index = new LinkedHashMap<>();
        List<Integer> positions = new ArrayList<>();
        int i = 0;
        while (i < named.length()) {
            char c = named.charAt(i);
            if (c == '\'' || c == '"') {
                int end = named.indexOf(c, i + 1);
                while (end >= 0 && end + 1 < named.length() && named.charAt(end + 1) == c) {
                    end = named.indexOf(c, end + 2);
                }
                if (end < 0) {
                    throw new IllegalArgumentException("unterminated " + c + " in " + named);
                }
                sql.append(named, i, end + 1);
                i = end + 1;
            } else if (c == ':' && i + 1 < named.length() && named.charAt(i + 1) == ':') {
                sql.append("::");
                i += 2;
            } else if (c == ':' && i + 1 < named.length() && isNameChar(named.charAt(i + 1))) {
                int end = i + 1;
                while (end < named.length() && isNameChar(named.charAt(end))) {
                    end++;
                }
                String name = named.substring(i + 1, end);
                if (Character.isDigit(name.charAt(0))) {
                    throw new IllegalArgumentException("bind value " + name + " is not a named parameter; use "
                            + "DSL.param(name, type) for values and DSL.inline(...) for constants: " + named);
                }
                positions.add(index.computeIfAbsent(name, n -> index.size()));
                chunks.add(sql.substring(chunkStart));
                sql.append('?');
                chunkStart = sql.length();
                i = end;
            } else {
                sql.append(c);
                i++;
            }
        }
        chunks.add(sql.substring(chunkStart));
        return new RenderedQuery(
                sql.toString(),
                chunks.toArray(String[]::new),
                index.keySet().toArray(String[]::new),
                positions.stream().mapToInt(Integer::intValue).toArray(),
                fields.clone(),
                mode);
    }

    private static boolean isNameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    /** The SQL sent to the server, with JDBC placeholders. */
    public String sql() {
        return sql;
    }

    /** The parameter bound at each placeholder, in order. */
    public List<String> placeholders() {
        return Arrays.stream(nameOfPosition).mapToObj(p -> names[p]).toList();
    }

    /** A new, empty set of values for one execution. */
    public Binds binds() {
        return new Binds(this);
    }

    /** {@return whether the statement has a parameter of this name} */
    public boolean hasParameter(String name) {
        for (String n : names) {
            if (n.equals(name)) {
                return true;
            }
        }
        return false;
    }

    int nameIndex(String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no parameter " + name + " in " + sql);
    }

    String name(int index) {
        return names[index];
    }

    int parameterCount() {
        return names.length;
    }

    /** The mode statements are executed in. */
    public ExecutionMode mode() {
        return mode;
    }

    /** Reads one row of a result. */
    @FunctionalInterface
    public interface RowMapper<T> {
        /** Maps the current row. */
        T map(ResultSet row) throws SQLException;
    }

    /**
     * Executes the statement on {@code ctx}'s connection (the caller's transaction, or a pooled
     * connection in auto-commit mode).
     *
     * <p>Write the statement with {@code RETURNING} (of its key, say) when only the count is
     * wanted: then the count is of the rows returned, which is the rows changed. Through jOOQ, a
     * statement that returns no rows pays for jOOQ's guess at what kind of statement it is (it
     * renders the SQL again, lower-cases it and compiles a few regular expressions, about a
     * quarter of jOOQ's client CPU for such a statement); one with a result is a read to it.
     *
     * @return the update count, or with {@code RETURNING} the number of rows returned
     */
    public int execute(DSLContext ctx, Binds binds) {
        if (fields.length > 0) {
            return read(ctx, binds, rs -> {
                int rows = 0;
                while (rs.next()) {
                    rows++;
                }
                return rows;
            });
        }
        check(ctx, binds);
        if (!throughJooq(ctx)) {
            return Errors.translating(() -> ctx.connectionResult(connection -> {
                try (PreparedStatement statement = prepare(connection, binds)) {
                    return statement.executeUpdate();
                }
            }));
        }
        return Errors.translating(() -> executing(ctx).query(statement(binds)).execute());
    }

    /** Executes a statement that returns rows ({@code SELECT}, or DML with {@code RETURNING}) and maps them all. */
    public <T> List<T> fetch(DSLContext ctx, Binds binds, RowMapper<T> mapper) {
        return read(ctx, binds, rs -> {
            List<T> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(mapper.map(rs));
            }
            return rows;
        });
    }

    /** Like {@link #fetch}, for a statement that returns at most one row. */
    public <T> Optional<T> fetchOptional(DSLContext ctx, Binds binds, RowMapper<T> mapper) {
        return read(ctx, binds, rs -> {
            if (!rs.next()) {
                return Optional.empty();
            }
            T row = mapper.map(rs);
            if (rs.next()) {
                throw new IllegalStateException("more than one row from " + sql);
            }
            return Optional.of(row);
        });
    }

    private interface Reader<T> {
        T read(ResultSet rows) throws SQLException;
    }

    private <T> T read(DSLContext ctx, Binds binds, Reader<T> reader) {
        check(ctx, binds);
        if (!throughJooq(ctx)) {
            return Errors.translating(() -> ctx.connectionResult(connection -> {
                try (PreparedStatement statement = prepare(connection, binds);
                        ResultSet rs = statement.executeQuery()) {
                    return reader.read(rs);
                }
            }));
        }
        return Errors.translating(() -> {
            ResultQuery<Record> query = executing(ctx).resultQuery(statement(binds));
            try (Cursor<Record> cursor = (fields.length == 0 ? query : query.coerce(fields)).fetchLazy()) {
                return reader.read(Objects.requireNonNull(cursor.resultSet(), "a fetched cursor has a result set"));
            } catch (SQLException e) {
                throw new DataAccessException("reading the result of " + sql + ": " + e.getMessage(), e);
            }
        });
    }

    /**
     * Whether this execution goes through jOOQ: in {@link ExecutionMode#JOOQ}, when anything
     * would observe or change it ({@link JooqObservers}); otherwise the same statement goes
     * straight to a connection of {@code ctx}'s connection provider.
     */
    private boolean throughJooq(DSLContext ctx) {
        return mode == ExecutionMode.JOOQ && JooqObservers.any(ctx.configuration());
    }

    /** {@code ctx}, or a context on a copy of its configuration with the settings the SQL needs. */
    private static DSLContext executing(DSLContext ctx) {
        Configuration configuration = ctx.configuration();
        Configuration pinned = PinnedSettings.forExecution(configuration);
        return pinned == configuration ? ctx : DSL.using(pinned);
    }

    private void check(DSLContext ctx, Binds binds) {
        Objects.requireNonNull(ctx, "ctx");
        Objects.requireNonNull(binds, "binds");
        if (binds.query() != this) {
            throw new IllegalArgumentException("binds belong to another statement");
        }
        binds.requireComplete();
    }

    private PreparedStatement prepare(Connection connection, Binds binds) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        try {
            for (int position = 0; position < nameOfPosition.length; position++) {
                binds.set(statement, position + 1, nameOfPosition[position]);
            }
            return statement;
        } catch (SQLException | RuntimeException e) {
            statement.close();
            throw e;
        }
    }

    private Execution statement(Binds binds) {
        Param<?>[] params = new Param<?>[names.length];
        for (int i = 0; i < params.length; i++) {
            params[i] = binds.param(i);
        }
        return new Execution(this, params);
    }

    /**
     * One execution as a jOOQ query part: the pre-rendered SQL, with each placeholder written by
     * its bind value, which jOOQ renders as {@code ?} (or as a literal, when a listener renders
     * the query inlined) and binds with the JDBC call raw mode uses ({@link KindBinding}). So
     * listeners see exactly the SQL raw mode sends. jOOQ's casts are off: the SQL has its own.
     * It is an {@link SQL}, so that {@code resultQuery(SQL)} takes it as it is, without the
     * template parsing of a plain-SQL string.
     */
    private static final class Execution extends CustomQueryPart implements SQL {

        private static final long serialVersionUID = 1L;
        private final transient RenderedQuery query;
        private final transient Param<?>[] params;

        Execution(RenderedQuery query, Param<?>[] params) {
            this.query = query;
            this.params = params;
        }

        @Override
        public void accept(Context<?> ctx) {
            CastMode castMode = ctx.castMode();
            String[] chunks = query.chunks;
            int[] nameOfPosition = query.nameOfPosition;
            for (int position = 0; position < nameOfPosition.length; position++) {
                ctx.sql(chunks[position]);
                ctx.castMode(CastMode.NEVER)
                        .visit(params[nameOfPosition[position]])
                        .castMode(castMode);
            }
            ctx.sql(chunks[chunks.length - 1]);
        }
    }

    @Override
    public String toString() {
        return sql;
    }
}
