package dev.locksmith.it.support;

import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultExecuteListenerProvider;

/**
 * A {@code DSLContext} like another that counts the statements run through it, and makes them
 * fail (before they reach the database) while {@link #failing} is set: what a gauge's refresh
 * really sends, and what it does when the database does not answer.
 */
public final class CountingContext {

    private final AtomicInteger statements = new AtomicInteger();
    private volatile boolean failing;
    private final DSLContext dsl;

    public CountingContext(DSLContext base) {
        ExecuteListener counter = new ExecuteListener() {
            private static final long serialVersionUID = 1L;

            @Override
            public void executeStart(ExecuteContext ctx) {
                statements.incrementAndGet();
                if (failing) {
                    throw new IllegalStateException("scripted failure: the database is unreachable");
                }
            }
        };
        this.dsl = DSL.using(base.configuration().derive(new DefaultExecuteListenerProvider(counter)));
    }

    public DSLContext dsl() {
        return dsl;
    }

    /** Statements started so far, failed ones included. */
    public int statements() {
        return statements.get();
    }

    public void failing(boolean failing) {
        this.failing = failing;
    }
}
