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
        RenderedQuery q = RenderedQuery.of(dsl, dsl.selectFrom(t)
                .where(x.ge(start)).or(x.lt(start.minus(DSL.inline(1.0))))
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
        assertThatThrownBy(() -> RenderedQuery.of(dsl, dsl.selectOne().where(DSL.val(1).eq(DSL.inline(2)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a named parameter");
    }

    @Test
    void intervalsAreSentInWholeMicroseconds() throws Exception {
        RenderedQuery q = RenderedQuery.parse("select :d");
        Binds binds = q.binds().setInterval("d", java.time.Duration.ofSeconds(90, 1_234_567));
        var sent = new String[1];
        var statement = (java.sql.PreparedStatement) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {java.sql.PreparedStatement.class}, (proxy, method, args) -> {
                    if (method.getName().equals("setString")) {
                        sent[0] = (String) args[1];
                    }
                    return null;
                });
        binds.setter(0).set(statement, 1);
        assertThat(sent[0]).isEqualTo("90001234 microseconds");
    }
}
