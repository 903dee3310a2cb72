package dev.locksmith.jobs.runtime;

import dev.locksmith.jobs.Claim;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * How many jobs a leased worker may claim now: its threads, the jobs it claims ahead of them for
 * short runs, and the room the completion backlog leaves, less what it holds and what claims
 * under way asked for. The claimers reserve from it before each claim statement and give back
 * what the statement did not find; a job is held from its claim until its handler ends.
 * <b>Internal: not API.</b>
 */
final class ClaimRoom {

    /** How long a job claimed ahead should wait for a thread, at the average run. */
    private static final long PREFETCH_HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** The most jobs a default prefetch grows to while claims are slow (an explicit one's limit). */
    static final int MAX_GROWN_PREFETCH = 1000;

    /** A claim statement slower than this on average lets a default prefetch grow. */
    static final long SLOW_CLAIM_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final int threads;
    private final int claimers;
    /** The most jobs claimed ahead of free threads, while claims are quick. */
    private final int maxPrefetch;
    /** Whether {@link #maxPrefetch} grows while claims are slow: the default prefetch does. */
    private final boolean prefetchGrows;
    /** Handled jobs waiting for their completion beyond which the claimers wait. */
    private final int completionBacklog;
    /** Handled jobs waiting for their completion now. */
    private final IntSupplier completionsWaiting;

    /** Jobs claimed whose handler has not ended (started or waiting for a thread). */
    private final AtomicInteger outstanding = new AtomicInteger();
    /**
     * {@link #outstanding} plus the jobs claim statements under way have asked for: what the
     * claimers reserve from, with one compare-and-set, so that together they never hold more
     * than the worker may.
     */
    private final AtomicInteger held = new AtomicInteger();
    /** A moving average of handler runs in nanoseconds; negative until one has ended. */
    private final AtomicLong averageRunNanos = new AtomicLong(-1);
    /** A moving average of claim statements in nanoseconds; negative until one has returned. */
    private final AtomicLong averageClaimNanos = new AtomicLong(-1);

    /**
     * @param threads handler threads
     * @param claimers claim statements that may run at once
     * @param maxPrefetch the most jobs claimed ahead of free threads while claims are quick
     * @param prefetchGrows whether that grows while claims are slow ({@link #prefetchAllowance})
     * @param completionBacklog handled jobs waiting for their completion beyond which no more are claimed
     * @param completionsWaiting handled jobs waiting for their completion now
     */
    ClaimRoom(
            int threads,
            int claimers,
            int maxPrefetch,
            boolean prefetchGrows,
            int completionBacklog,
            IntSupplier completionsWaiting) {
        this.threads = threads;
        this.claimers = claimers;
        this.maxPrefetch = maxPrefetch;
        this.prefetchGrows = prefetchGrows;
        this.completionBacklog = completionBacklog;
        this.completionsWaiting = completionsWaiting;
    }

    /**
     * Whether every thread has a job to go on with and at least half of those claimed ahead
     * have not started: the claimers then wait, for fewer, larger claims. A handler that ends
     * wakes them only when this is no longer so.
     */
    boolean busy() {
        return outstanding.get() - threads >= (prefetchAllowance() + 1) / 2;
    }

    /**
     * Reserves room for a claimer's next claim statement: zero while {@link #busy()}, else what
     * the threads and jobs claimed ahead leave beside the jobs held and those other claims under
     * way asked for, split evenly between the claimers, and no more than the completion backlog
     * leaves (handled jobs waiting for their completion still hold leases: while the database is
     * slow to take completions, the worker claims no more than it takes). Returns zero when there
     * is no room. One counter, one compare-and-set: whatever happened meanwhile, the reservation
     * succeeds only if the total it was computed from is still the total.
     *
     * @return the claim's limit, or zero: claim nothing
     */
    int reserve() {
        if (busy()) {
            return 0;
        }
        int limit = threads + prefetchAllowance();
        int share = Math.min(Claim.MAX_LIMIT, (limit + claimers - 1) / claimers);
        while (true) {
            int taken = held.get();
            int free = Math.min(limit - taken, completionBacklog - completionsWaiting.getAsInt());
            free = claimSize(Math.min(free, share));
            if (free <= 0) {
                return 0;
            }
            if (held.compareAndSet(taken, taken + free)) {
                return free;
            }
        }
    }

    /**
     * Reserves room for one job, for a handler thread's claim of its next job: there is room
     * while the jobs held and asked for are fewer than the threads and the jobs claimed ahead,
     * and the completion backlog leaves room. Unlike {@link #reserve()}, it does not wait for
     * the worker to stop being {@link #busy()}: a thread that ended its job has room for one.
     *
     * @return whether one job may be claimed ({@link #claimed} or {@link #failed} then follows)
     */
    boolean reserveOne() {
        int limit = threads + prefetchAllowance();
        while (true) {
            int taken = held.get();
            if (taken >= limit || completionsWaiting.getAsInt() >= completionBacklog) {
                return false;
            }
            if (held.compareAndSet(taken, taken + 1)) {
                return true;
            }
        }
    }

    /**
     * Whether a completion backlog of {@code waiting} jobs refuses reservations: only then does a
     * batch of completions that takes the backlog down need to wake the claimers. A reservation
     * the backlog merely made smaller strands no one: a claimer's claim that filled claims again
     * at once, and a handler thread's goes on claiming after its job. The completer passes at
     * least any backlog a reservation read since its previous batch (what it took for this batch
     * and what it left waiting), so the first batch after a refusal sees it.
     *
     * @param waiting the most jobs that can have waited for their completion since the last look
     * @return whether the claimers are to be woken once the batch has been completed
     */
    boolean refuses(int waiting) {
        return waiting >= completionBacklog;
    }

    /**
     * A claim statement that reserved {@code reserved} returned {@code claimed} jobs: they stay
     * held until their handlers end, and the rest of the reservation goes back now, before the
     * claimer waits, for the others to use.
     */
    void claimed(int reserved, int claimed) {
        outstanding.addAndGet(claimed);
        held.addAndGet(claimed - reserved);
    }

    /** A claim statement that reserved {@code reserved} failed: the reservation goes back. */
    void failed(int reserved) {
        held.addAndGet(-reserved);
    }

    /** A claimed job's handler ended (or will not run): it is no longer held. */
    void ended() {
        outstanding.decrementAndGet();
        held.decrementAndGet();
    }

    /** A handler ran for {@code nanos}: the average that sets how many jobs are claimed ahead. */
    void recordRun(long nanos) {
        movingAverage(averageRunNanos, nanos);
    }

    /** A claim statement took {@code nanos}: the average that lets a default prefetch grow. */
    void recordClaim(long nanos) {
        movingAverage(averageClaimNanos, nanos);
    }

    /** An exponential moving average over about the last 16 values. */
    private static void movingAverage(AtomicLong average, long nanos) {
        average.updateAndGet(a -> a < 0 ? nanos : a + (nanos - a) / 16);
    }

    /**
     * {@code n} rounded down to one of a few claim sizes: exact up to 16, then two steps per
     * power of two (16, 24, 32, 48, 64, 96, ...), less than a third below {@code n}. The claim's
     * limit is part of its statement text: a worker that asked for whatever was free would send
     * hundreds of different statements, each parsed and planned anew by the server, and read in
     * text rather than binary format by the driver, which prepares a statement only once it has
     * seen the same text a few times.
     */
    static int claimSize(int n) {
        if (n <= 16) {
            return n;
        }
        int step = Integer.highestOneBit(n) / 2;
        return n - n % step;
    }

    /**
     * Jobs to claim ahead of free threads: as many as the threads end in 100 ms at the average
     * run so far, at most the prefetch, none before a run has ended. A job claimed ahead so waits
     * about that long for a thread, and a worker with long jobs claims only for its free threads.
     *
     * <p>A default prefetch grows while claim statements take 5 ms or more on average: to as many
     * jobs as the threads end in two claims, at most {@value #MAX_GROWN_PREFETCH}, and the 100 ms
     * to two claims. A slow claim's cost is mostly per statement (while the MVCC horizon is held,
     * every claim steps over the index entries of every job claimed since, which no VACUUM can
     * remove), so a worker that claimed no more than eight jobs per thread at a time ran no more
     * jobs a second than that many per claim allowed, and fell behind; a job claimed ahead waits
     * no longer for a thread than it would have waited for the next claim. Large claims are
     * slower than small ones, so a worker draining a backlog of short jobs, once its claims
     * have grown, keeps them large while the backlog lasts (it drains about twice as fast for
     * it); with no backlog a claim finds few jobs, is quick, and the average falls back. While
     * claims are quick the prefetch stays as it is: a run that the average mispredicts (a long
     * job after many short ones) then holds at most that many jobs from other workers.
     */
    int prefetchAllowance() {
        long run = averageRunNanos.get();
        if (maxPrefetch == 0 || run < 0) {
            return 0;
        }
        long horizon = PREFETCH_HORIZON_NANOS;
        long ceiling = maxPrefetch;
        long claim = averageClaimNanos.get();
        if (prefetchGrows && claim >= SLOW_CLAIM_NANOS) {
            horizon = Math.max(horizon, 2 * claim);
            ceiling = Math.max(ceiling, Math.min(MAX_GROWN_PREFETCH, 2L * threads * claim / Math.max(1, run)));
        }
        long ahead = threads * horizon / Math.max(1, run);
        return (int) Math.min(ceiling, ahead);
    }
}
