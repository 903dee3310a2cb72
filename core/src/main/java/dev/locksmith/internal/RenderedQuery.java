package dev.locksmith.internal;

import dev.locksmith.PgErrors;
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
import org.jooq.DSLContext;
import org.jooq.Query;

/**
 * A statement written in jOOQ's DSL on the generated tables, rendered once, and executed many
 * times on the caller's connection with fresh bind values. <b>Internal: not API.</b>
 *
 * <p>Why: building and rendering a jOOQ query costs tens to hundreds of microseconds of client
 * CPU per execution (about 100 us for the pool's acquisition statement on this project's
 * machines), which on a small server sharing cores with its clients is the difference between
 * the library and hand-written JDBC. The hot statements of the repositories are therefore
 * rendered when a repository is constructed, with the {@link DSLContext} given to it (so its
 * dialect, quoting and schema mapping apply), and executed through JDBC on the connection of
 * the {@code DSLContext} passed to each call, inside the caller's transaction when there is
 * one. The SQL text is identical on every execution, so PgJDBC server-prepares it after a few
 * uses and PostgreSQL can keep a generic plan.
 *
 * <p>Every bind value of the query must be a named parameter ({@code DSL.param("name", type)});
 * everything else is inlined ({@code DSL.inline}). A name may occur several times and is bound
 * once. Statements executed this way are not seen by the {@code ExecuteListener}s of the
 * caller's configuration.
 */
public final class RenderedQuery {

    private final String sql;
    private final String[] names;
    private final int[] nameOfPosition;

    private RenderedQuery(String sql, String[] names, int[] nameOfPosition) {
        this.sql = sql;
        this.names = names;
        this.nameOfPosition = nameOfPosition;
    }

    /**
     * Renders {@code query} with {@code dsl}'s settings.
     *
     * @throws IllegalArgumentException when the query has a bind value that is not a named
     *     parameter
     */
    public static RenderedQuery of(DSLContext dsl, Query query) {
        Objects.requireNonNull(dsl, "dsl");
        Objects.requireNonNull(query, "query");
        return parse(dsl.renderNamedParams(query));
    }

    /**
     * Turns jOOQ's named-parameter rendering ({@code :name}) into JDBC placeholders, recording
     * which name each placeholder binds. Quoted identifiers, string literals and {@code ::}
     * casts are passed over.
     */
    static RenderedQuery parse(String named) {
        StringBuilder sql = new StringBuilder(named.length());
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
                sql.append('?');
                i = end;
            } else {
                sql.append(c);
                i++;
            }
        }
        return new RenderedQuery(sql.toString(), index.keySet().toArray(String[]::new),
                positions.stream().mapToInt(Integer::intValue).toArray());
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
     * @return the update count
     */
    public int execute(DSLContext ctx, Binds binds) {
        return run(ctx, binds, PreparedStatement::executeUpdate);
    }

    /** Executes a statement that returns rows ({@code SELECT}, or DML with {@code RETURNING}) and maps them all. */
    public <T> List<T> fetch(DSLContext ctx, Binds binds, RowMapper<T> mapper) {
        return run(ctx, binds, statement -> {
            List<T> rows = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    rows.add(mapper.map(rs));
                }
            }
            return rows;
        });
    }

    /** Like {@link #fetch}, for a statement that returns at most one row. */
    public <T> Optional<T> fetchOptional(DSLContext ctx, Binds binds, RowMapper<T> mapper) {
        return run(ctx, binds, statement -> {
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                T row = mapper.map(rs);
                if (rs.next()) {
                    throw new IllegalStateException("more than one row from " + sql);
                }
                return Optional.of(row);
            }
        });
    }

    private interface Work<T> {
        T run(PreparedStatement statement) throws SQLException;
    }

    private <T> T run(DSLContext ctx, Binds binds, Work<T> work) {
        Objects.requireNonNull(ctx, "ctx");
        Objects.requireNonNull(binds, "binds");
        if (binds.query() != this) {
            throw new IllegalArgumentException("binds belong to another statement");
        }
        binds.requireComplete();
        return PgErrors.translating(() -> ctx.connectionResult(connection -> execute(connection, binds, work)));
    }

    private <T> T execute(Connection connection, Binds binds, Work<T> work) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int position = 0; position < nameOfPosition.length; position++) {
                binds.setter(nameOfPosition[position]).set(statement, position + 1);
            }
            return work.run(statement);
        }
    }

    @Override
    public String toString() {
        return sql;
    }
}
