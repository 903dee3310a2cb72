package dev.locksmith.it.support;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;

/**
 * Records what reaches the database two ways: every SQL text the driver is asked to prepare or
 * execute (through a {@link DataSource} proxy), and every statement jOOQ's {@link ExecuteListener}s
 * see, with its bind values. Comparing the two shows which statements bypassed jOOQ.
 */
public final class RecordingJdbc {

    /** A statement as an {@code ExecuteListener} saw it at {@code executeStart}. */
    public record Seen(String sql, List<Object> binds) {}

    private static final Set<String> SENDING = Set.of(
            "prepareStatement",
            "prepareCall",
            "execute",
            "executeQuery",
            "executeUpdate",
            "executeLargeUpdate",
            "addBatch");

    private final List<String> sent = new ArrayList<>();
    private final List<Seen> seen = new ArrayList<>();

    /** The SQL texts the driver received, in order, since the last {@link #clear()}. */
    public synchronized List<String> sent() {
        return List.copyOf(sent);
    }

    /** The statements listeners saw, in order, since the last {@link #clear()}. */
    public synchronized List<Seen> seen() {
        return List.copyOf(seen);
    }

    /** The SQL of {@link #seen()}. */
    public synchronized List<String> seenSql() {
        return seen.stream().map(Seen::sql).toList();
    }

    /** Forgets everything recorded so far. */
    public synchronized void clear() {
        sent.clear();
        seen.clear();
    }

    /** A listener that records what it sees. */
    public ExecuteListener listener() {
        return new ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                synchronized (RecordingJdbc.this) {
                    seen.add(new Seen(
                            ctx.sql(),
                            ctx.query() == null ? List.of() : ctx.query().getBindValues()));
                }
            }
        };
    }

    /** {@code target}, recording the SQL its connections are given. */
    public DataSource wrap(DataSource target) {
        return proxy(DataSource.class, target);
    }

    private <T> T proxy(Class<T> type, Object target) {
        InvocationHandler handler = (p, method, args) -> {
            if (args != null
                    && args.length > 0
                    && args[0] instanceof String sql
                    && SENDING.contains(method.getName())) {
                synchronized (this) {
                    sent.add(sql);
                }
            }
            Object result = invoke(method, target, args);
            if (result instanceof Connection connection && method.getName().equals("getConnection")) {
                return proxy(Connection.class, connection);
            }
            if (result instanceof Statement statement
                    && !(result instanceof java.sql.PreparedStatement)
                    && method.getName().equals("createStatement")) {
                return proxy(Statement.class, statement);
            }
            return result;
        };
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
