package dev.locksmith.internal;

import java.sql.SQLException;
import org.jooq.Binding;
import org.jooq.BindingGetResultSetContext;
import org.jooq.BindingGetSQLInputContext;
import org.jooq.BindingGetStatementContext;
import org.jooq.BindingRegisterContext;
import org.jooq.BindingSQLContext;
import org.jooq.BindingSetSQLOutputContext;
import org.jooq.BindingSetStatementContext;
import org.jooq.Converter;
import org.jooq.conf.ParamType;

/**
 * How jOOQ renders and binds a {@link Binds} value of a {@link RenderedQuery}: a bare placeholder
 * (the pre-rendered SQL has the casts already; jOOQ's own array binding would add another), set
 * with the same JDBC call as in raw mode; a literal of the value's SQL type when the statement is
 * rendered inlined (a logging listener). Bind values only: nothing is read through it.
 * <b>Internal: not API.</b>
 */
final class KindBinding implements Binding<Object, Object> {

    private static final long serialVersionUID = 1L;
    private static final Converter<Object, Object> IDENTITY =
            Converter.ofNullable(Object.class, Object.class, value -> value, value -> value);

    private final Binds.Kind kind;

    KindBinding(Binds.Kind kind) {
        this.kind = kind;
    }

    @Override
    public Converter<Object, Object> converter() {
        return IDENTITY;
    }

    @Override
    public void sql(BindingSQLContext<Object> ctx) {
        if (ctx.render().paramType() == ParamType.INLINED) {
            ctx.render().visit(kind.literal(ctx.value()));
        } else {
            ctx.render().sql(ctx.variable());
        }
    }

    @Override
    public void set(BindingSetStatementContext<Object> ctx) throws SQLException {
        kind.set(ctx.statement(), ctx.index(), ctx.value());
    }

    @Override
    public void register(BindingRegisterContext<Object> ctx) {
        throw unsupported();
    }

    @Override
    public void set(BindingSetSQLOutputContext<Object> ctx) {
        throw unsupported();
    }

    @Override
    public void get(BindingGetResultSetContext<Object> ctx) {
        throw unsupported();
    }

    @Override
    public void get(BindingGetStatementContext<Object> ctx) {
        throw unsupported();
    }

    @Override
    public void get(BindingGetSQLInputContext<Object> ctx) {
        throw unsupported();
    }

    private static UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException("a bind value of a pre-rendered statement is only bound, never read");
    }
}
