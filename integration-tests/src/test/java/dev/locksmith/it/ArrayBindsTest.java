package dev.locksmith.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.ExecutionMode;
import dev.locksmith.Locksmith;
import dev.locksmith.internal.Binds;
import dev.locksmith.internal.RenderedQuery;
import dev.locksmith.it.support.DatabaseTest;
import java.sql.Array;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.jooq.DSLContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGProperty;

/**
 * Array values of the library's statements reach the server intact: numbers and strings go in
 * PgJDBC's binary form, UUIDs in text (RenderedQueryTest shows what reaches the driver), and
 * each arrives element for element (NULLs, quotes, backslashes, commas, braces, non-ASCII text
 * and empty arrays included), whether the statement runs straight
 * on the connection, through jOOQ (a listener present), or on a connection in the simple query
 * mode (which has no binary parameters).
 */
class ArrayBindsTest extends DatabaseTest {

    private static final String[] STRINGS = {
        "plain",
        "",
        null,
        "a,b",
        "{braces}",
        "\"quoted\"",
        "back\\slash",
        "NULL",
        "tab\tand\nnewline",
        "ünïcødé ✓",
        "{\"json\": [1, \"two\"]}"
    };
    private static final Long[] LONGS = {Long.MIN_VALUE, -1L, 0L, null, Long.MAX_VALUE};
    private static final Integer[] INTS = {Integer.MIN_VALUE, null, 7, Integer.MAX_VALUE};
    private static final double[] DOUBLES = {-0.5, 0.0, 1e-300, 12345.678, Double.MAX_VALUE};
    private static final UUID[] UUIDS = {new UUID(0, 0), UUID.randomUUID(), null, new UUID(-1, -1)};

    static Stream<Arguments> ways() {
        return Stream.of(
                Arguments.of("straight on the connection", false, false),
                Arguments.of("through jOOQ", true, false),
                Arguments.of("in the simple query mode", false, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ways")
    void everyElementArrivesAsSent(String way, boolean listened, boolean simple) throws Exception {
        try (var simplePool = simple ? simplePool() : null) {
            DSLContext ctx = simple ? DSL.using(simplePool, SQLDialect.POSTGRES) : dsl;
            if (listened) {
                ctx = DSL.using(ctx.configuration().deriveAppending(new ExecuteListener() {
                    private static final long serialVersionUID = 1L;
                }));
            }
            assertThat(Locksmith.of(ctx).executionMode()).isEqualTo(ExecutionMode.JOOQ);
            RenderedQuery echo = RenderedQuery.of(
                    ctx,
                    ctx.select(
                            DSL.param("s", SQLDataType.VARCHAR.array()),
                            DSL.param("l", SQLDataType.BIGINT.array()),
                            DSL.param("i", SQLDataType.INTEGER.array()),
                            DSL.param("d", SQLDataType.DOUBLE.array()),
                            DSL.param("u", SQLDataType.UUID.array()),
                            DSL.param("no_longs", SQLDataType.BIGINT.array()),
                            DSL.param("no_strings", SQLDataType.VARCHAR.array()),
                            DSL.param("no_uuids", SQLDataType.UUID.array())));
            Binds binds = echo.binds()
                    .setStrings("s", Arrays.asList(STRINGS))
                    .setLongs("l", Arrays.asList(LONGS))
                    .setInts("i", Arrays.asList(INTS))
                    .setDoubles("d", DOUBLES)
                    .setUuids("u", Arrays.asList(UUIDS))
                    .setLongs("no_longs", List.of())
                    .setStrings("no_strings", List.of())
                    .setUuids("no_uuids", List.of());

            List<Object[][]> rows = echo.fetch(ctx, binds, rs -> new Object[][] {
                elements(rs.getArray(1)),
                elements(rs.getArray(2)),
                elements(rs.getArray(3)),
                elements(rs.getArray(4)),
                elements(rs.getArray(5)),
                elements(rs.getArray(6)),
                elements(rs.getArray(7)),
                elements(rs.getArray(8))
            });

            assertThat(rows).hasSize(1);
            Object[][] row = rows.get(0);
            assertThat(row[0]).containsExactly((Object[]) STRINGS);
            assertThat(row[1]).containsExactly((Object[]) LONGS);
            assertThat(row[2]).containsExactly((Object[]) INTS);
            assertThat(row[3]).containsExactly(Arrays.stream(DOUBLES).boxed().toArray());
            assertThat(row[4]).containsExactly((Object[]) UUIDS);
            assertThat(row[5]).isEmpty();
            assertThat(row[6]).isEmpty();
            assertThat(row[7]).isEmpty();
        }
    }

    private static Object[] elements(Array array) throws java.sql.SQLException {
        return (Object[]) array.getArray();
    }

    private com.zaxxer.hikari.HikariDataSource simplePool() {
        var config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(database.jdbcUrl());
        config.setUsername(database.user());
        if (database.password() != null) {
            config.setPassword(database.password());
        }
        config.setMaximumPoolSize(1);
        config.addDataSourceProperty(PGProperty.PREFER_QUERY_MODE.getName(), "simple");
        return new com.zaxxer.hikari.HikariDataSource(config);
    }
}
