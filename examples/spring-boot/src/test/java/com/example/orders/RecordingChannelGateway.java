package com.example.orders;

import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;

/**
 * Records, for every call, the account it was made as and who held that account's lease at the
 * moment of the call (read from the pool's table, not from what acquire returned). Can hold calls
 * until released, for a test that leases every account at once.
 */
class RecordingChannelGateway implements ChannelGateway {

    /**
     * One call as the gateway saw it.
     *
     * @param channelAccount the account
     * @param holderDuringCall the lease holder in the pool table while the call ran
     */
    record Call(String channelAccount, String holderDuringCall) {}

    private final ChannelAccountPool pool;
    private final DSLContext dsl;
    private final List<Call> calls = new ArrayList<>();
    private volatile CountDownLatch gate = new CountDownLatch(0);
    private volatile CountDownLatch held = new CountDownLatch(0);

    RecordingChannelGateway(ChannelAccountPool pool, DSLContext dsl) {
        this.pool = pool;
        this.dsl = dsl;
    }

    @Override
    public String call(ChannelAccount account, String message) throws InterruptedException {
        String holder = pool.find(dsl, account.publicKey())
                .flatMap(ChannelAccount::holder)
                .orElse("nobody");
        synchronized (this) {
            calls.add(new Call(account.publicKey(), holder));
        }
        held.countDown();
        if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never opened the gate");
        }
        return "test-" + message;
    }

    /** Holds the next calls until {@link #open()}; {@link #awaitHeld} waits for {@code count} of them. */
    void hold(int count) {
        gate = new CountDownLatch(1);
        held = new CountDownLatch(count);
    }

    boolean awaitHeld(long seconds) throws InterruptedException {
        return held.await(seconds, TimeUnit.SECONDS);
    }

    void open() {
        gate.countDown();
    }

    synchronized List<Call> calls() {
        return List.copyOf(calls);
    }
}
