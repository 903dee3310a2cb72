package dev.locksmith.it.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * A transaction kept open on its own thread and connection: it runs {@code work} (typically
 * taking locks), then waits until {@link #commit()} or {@link #rollback()}.
 */
public final class HeldTransaction implements AutoCloseable {

    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private final CompletableFuture<Void> done;
    private volatile boolean commit = true;
    private volatile int backendPid;

    private HeldTransaction(DSLContext dsl, Consumer<DSLContext> work) {
        done = CompletableFuture.runAsync(() -> {
            try {
                dsl.transaction(configuration -> {
                    DSLContext tx = configuration.dsl();
                    backendPid = tx.select(DSL.field("pg_backend_pid()", Integer.class))
                            .fetchSingle()
                            .value1();
                    work.accept(tx);
                    started.countDown();
                    if (!finish.await(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("held transaction was never released");
                    }
                    if (!commit) {
                        throw new RolledBack();
                    }
                });
            } catch (RolledBack expected) {
                // rolled back on request
            } finally {
                started.countDown();
            }
        });
    }

    /** Starts the transaction and returns once {@code work} has run. */
    public static HeldTransaction start(DSLContext dsl, Consumer<DSLContext> work) throws Exception {
        HeldTransaction held = new HeldTransaction(dsl, work);
        if (!held.started.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("held transaction did not start");
        }
        if (held.done.isCompletedExceptionally()) {
            held.done.get();
        }
        return held;
    }

    /** The server process of the held connection. */
    public int backendPid() {
        return backendPid;
    }

    /** Commits and waits for the commit. */
    public void commit() throws Exception {
        finish.countDown();
        done.get(30, TimeUnit.SECONDS);
    }

    /** Rolls back and waits for the rollback. */
    public void rollback() throws Exception {
        commit = false;
        commit();
    }

    /** Rolls back if still open. */
    @Override
    public void close() {
        if (!done.isDone()) {
            try {
                rollback();
            } catch (Exception e) {
                throw new IllegalStateException("held transaction did not end", e);
            }
        }
    }

    private static final class RolledBack extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RolledBack() {
            super("rolled back on request", null, false, false);
        }
    }
}
