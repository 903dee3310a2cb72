package dev.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;

class RenderedQueryTest {

    private final DSLContext dsl = DSL.using(SQLDialect.POSTGRES);

    @Test
    void namedParametersBecomePlaceholdersAndARepeatedNameIsOneParameter() {
        var start = DSL.param("start", SQLDataType.DOUBLE);
        var t = DSL.table(DSL.name("t"));
        var x = DSL.field(DSL.name("t", "x"), SQLDataType.DOUBLE);
        RenderedQuery q = RenderedQuery.of(
                dsl,
                dsl.selectFrom(t)
                        .where(x.ge(start))
                        .or(x.lt(start.minus(DSL.inline(1.0))))
                        .and(DSL.field(DSL.name("t", "s"), String.class).eq(DSL.param("owner", String.class))));
        assertThat(q.placeholders()).containsExactly("start", "start", "owner");
        assertThat(q.sql()).doesNotContain(":start").contains("?");
        assertThat(q.sql().chars().filter(c -> c == '?').count()).isEqualTo(3);
        Binds binds = q.binds().set("start", 0.5);
        assertThatThrownBy(binds::requireComplete).hasMessageContaining("owner");
        assertThatThrownBy(() -> binds.set("nope", 1)).hasMessageContaining("no parameter nope");
    }

    @Test
    void colonsInsideLiteralsIdentifiersAndCastsAreNotParameters() {
        RenderedQuery q = RenderedQuery.parse("select 'a:b', 'it''s :x', \"c:d\", x::text from t where y = :y");
        assertThat(q.placeholders()).containsExactly("y");
        assertThat(q.sql()).isEqualTo("select 'a:b', 'it''s :x', \"c:d\", x::text from t where y = ?");
    }

    @Test
    void aBindValueThatIsNotANamedParameterIsRefused() {
        assertThatThrownBy(() ->
                        RenderedQuery.of(dsl, dsl.selectOne().where(DSL.val(1).eq(DSL.inline(2)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a named parameter");
    }

    @Test
    void intervalsAreSentInWholeMicroseconds() throws Exception {
        RenderedQuery q = RenderedQuery.parse("select :d");
        Binds binds = q.binds().setInterval("d", java.time.Duration.ofSeconds(90, 1_234_567));
        var sent = new String[1];
        var statement = (java.sql.PreparedStatement) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {java.sql.PreparedStatement.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("setString")) {
                        sent[0] = (String) args[1];
                    }
                    return null;
                });
        binds.set(statement, 1, 0);
        assertThat(sent[0]).isEqualTo("0:01:30.001234");
    }

    @Test
    void intervalsAreWrittenAsATimeThatPostgres13ReadsAtAnyLength() {
        assertThat(Binds.intervalText(java.time.Duration.ZERO)).isEqualTo("0:00:00.000000");
        assertThat(Binds.intervalText(java.time.Duration.ofNanos(1_999))).isEqualTo("0:00:00.000001");
        assertThat(Binds.intervalText(java.time.Duration.ofHours(1))).isEqualTo("1:00:00.000000");
        assertThat(Binds.intervalText(java.time.Duration.ofHours(-1).minusMillis(500)))
                .isEqualTo("-1:00:00.500000");
        assertThat(Binds.intervalText(java.time.Duration.ofSeconds(-1, 1_000))).isEqualTo("-0:00:00.999999");
        assertThat(Binds.intervalText(Durations.MAX)).isEqualTo("876600:00:00.000000");
        assertThat(Binds.intervalText(java.time.Duration.ofSeconds(45_296, 7_000)))
                .isEqualTo("12:34:56.000007");
    }

    @Test
    void arraysOfNumbersAndStringsAreGivenToTheDriverAsJavaArraysAndUuidsAsATypedText() throws Exception {
        RenderedQuery q = RenderedQuery.parse("select :l, :i, :d, :s, :u, :none");
        java.util.UUID first = new java.util.UUID(1, 2);
        Binds binds = q.binds()
                .setLongs("l", java.util.Arrays.asList(1L, null, -3L))
                .setInts("i", java.util.List.of(4))
                .setDoubles("d", new double[] {0.5})
                .setStrings("s", java.util.Arrays.asList("a\"b", null))
                .setUuids("u", java.util.Arrays.asList(first, null))
                .setLongs("none", java.util.List.of());
        java.util.List<String> calls = new java.util.ArrayList<>();
        Object[] sent = new Object[7];
        var statement = (java.sql.PreparedStatement) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {java.sql.PreparedStatement.class},
                (proxy, method, args) -> {
                    calls.add(method.getName());
                    if (method.getName().equals("setObject") && args.length == 2) {
                        sent[(Integer) args[0]] = args[1];
                    }
                    return null;
                });
        for (int i = 0; i < 6; i++) {
            binds.set(statement, i + 1, i);
        }

        // setObject with a Java array, which PgJDBC sends in binary; never createArrayOf (text),
        // which would need the statement's connection
        assertThat(calls).containsOnly("setObject");
        assertThat(sent[1]).isInstanceOf(Long[].class).isEqualTo(new Long[] {1L, null, -3L});
        assertThat(sent[2]).isInstanceOf(Integer[].class).isEqualTo(new Integer[] {4});
        assertThat(sent[3]).isInstanceOf(Double[].class).isEqualTo(new Double[] {0.5});
        assertThat(sent[4]).isInstanceOf(String[].class).isEqualTo(new String[] {"a\"b", null});
        assertThat(sent[5]).isInstanceOf(org.postgresql.util.PGobject.class);
        var uuids = (org.postgresql.util.PGobject) sent[5];
        assertThat(uuids.getType()).isEqualTo("uuid[]");
        assertThat(uuids.getValue()).isEqualTo("{" + first + ",NULL}");
        assertThat(sent[6]).isEqualTo(new Long[0]);
    }

    @Test
    void theSettingsTheSqlDependsOnArePinnedSoNoUserSettingChangesIt() {
        var t = DSL.table(DSL.name("locksmith", "t"));
        var x = DSL.field(DSL.name("locksmith", "t", "x"), SQLDataType.BIGINT);
        java.util.function.Function<DSLContext, RenderedQuery> render = ctx -> RenderedQuery.of(
                ctx,
                ctx.selectFrom(t)
                        .where(x.eq(DSL.param("id", SQLDataType.BIGINT)))
                        .and(x.ne(DSL.inline(0L))));
        RenderedQuery plain = render.apply(dsl);
        assertThat(plain.placeholders()).containsExactly("id");
        for (org.jooq.conf.Settings settings : java.util.List.of(
                new org.jooq.conf.Settings().withRenderNamedParamPrefix("$"),
                new org.jooq.conf.Settings().withStatementType(org.jooq.conf.StatementType.STATIC_STATEMENT),
                new org.jooq.conf.Settings().withParamType(org.jooq.conf.ParamType.INLINED),
                new org.jooq.conf.Settings().withParamCastMode(org.jooq.conf.ParamCastMode.NEVER),
                new org.jooq.conf.Settings().withRenderNameCase(org.jooq.conf.RenderNameCase.UPPER),
                new org.jooq.conf.Settings().withRenderSchema(false))) {
            RenderedQuery rendered = render.apply(DSL.using(SQLDialect.POSTGRES, settings));
            assertThat(rendered.sql()).as(settings.toString()).isEqualTo(plain.sql());
            assertThat(rendered.placeholders()).containsExactly("id");
        }
    }

    @Test
    void theExecutionModeIsTheConstructionContextsAndJooqByDefault() {
        var query = dsl.selectOne().where(DSL.param("a", SQLDataType.INTEGER).eq(DSL.inline(1)));
        assertThat(RenderedQuery.of(dsl, query).mode()).isEqualTo(dev.locksmith.ExecutionMode.JOOQ);
        assertThat(RenderedQuery.of(
                                dev.locksmith.Locksmith.builder(dsl)
                                        .executionMode(dev.locksmith.ExecutionMode.RAW_JDBC)
                                        .build()
                                        .dsl(),
                                query)
                        .mode())
                .isEqualTo(dev.locksmith.ExecutionMode.RAW_JDBC);
    }
}
