package dev.locksmith.jobs.runtime;

import java.lang.reflect.Method;
import java.util.OptionalInt;
import javax.sql.DataSource;

/**
 * The maximum size of a connection pool, for the pools whose size can be read without
 * depending on them: HikariCP ({@code getMaximumPoolSize}), Apache DBCP 2 ({@code getMaxTotal})
 * and Tomcat JDBC ({@code getMaxActive}). Unknown for anything else, including a data source
 * that hands out a new physical connection each time (no limit to check).
 */
final class PoolSize {

    private static final String[] GETTERS = {"getMaximumPoolSize", "getMaxTotal", "getMaxActive"};

    private PoolSize() {}

    /**
     * Fails when {@code dataSource} is a pool known to allow fewer than {@code needed}
     * connections; {@code worker} and {@code threads} name what needs them in the message.
     */
    static void require(DataSource dataSource, int needed, String worker, int threads, boolean listen) {
        maximum(dataSource).ifPresent(maximum -> {
            if (maximum < needed) {
                throw new IllegalStateException("the data source allows at most " + maximum + " connections, but a "
                        + worker + " with " + threads + " threads" + (listen ? " and LISTEN" : "") + " needs " + needed
                        + " at the same time; enlarge the pool or lower threads");
            }
        });
    }

    static OptionalInt maximum(DataSource dataSource) {
        for (String getter : GETTERS) {
            try {
                Method method = dataSource.getClass().getMethod(getter);
                if (method.getReturnType() == int.class) {
                    int value = (int) method.invoke(dataSource);
                    return value > 0 ? OptionalInt.of(value) : OptionalInt.empty();
                }
            } catch (ReflectiveOperationException | RuntimeException notThisPool) {
                // try the next getter
            }
        }
        return OptionalInt.empty();
    }
}
