package dev.locksmith.jobs.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How many jobs a leased worker claims ahead of its threads: what the threads end in 100 ms, at
 * most the prefetch; a default prefetch grows while claim statements are slow, an explicit one
 * never does.
 */
class PrefetchAllowanceTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private static ClaimRoom room(int maxPrefetch, boolean grows) {
        return new ClaimRoom(4, 1, maxPrefetch, grows, 1000, () -> 0);
    }

    @Test
    void nothingIsClaimedAheadBeforeARunHasEndedNorWithPrefetchZero() {
        ClaimRoom fresh = room(32, true);
        fresh.recordClaim(30 * MS);
        assertThat(fresh.prefetchAllowance()).isZero();

        ClaimRoom none = room(0, false);
        none.recordRun(MS / 10);
        none.recordClaim(30 * MS);
        assertThat(none.prefetchAllowance()).isZero();
    }

    @Test
    void whileClaimsAreQuickShortJobsAreClaimedAheadUpToThePrefetch() {
        ClaimRoom quick = room(32, true);
        quick.recordRun(MS);
        quick.recordClaim(MS / 2);
        // 4 threads end 400 jobs of 1 ms in 100 ms; the prefetch holds it to 32
        assertThat(quick.prefetchAllowance()).isEqualTo(32);

        ClaimRoom longJobs = room(32, true);
        longJobs.recordRun(40 * MS);
        longJobs.recordClaim(MS / 2);
        // 4 threads end 10 jobs of 40 ms in 100 ms
        assertThat(longJobs.prefetchAllowance()).isEqualTo(10);
    }

    @Test
    void quickClaimsLeaveADefaultPrefetchAsItIsEvenForJobsMuchShorterThanTheClaim() {
        ClaimRoom quick = room(32, true);
        quick.recordRun(MS / 100);
        quick.recordClaim(4 * MS);
        assertThat(quick.prefetchAllowance()).isEqualTo(32);
    }

    @Test
    void slowClaimsGrowADefaultPrefetchToWhatTheThreadsEndInTwoClaims() {
        ClaimRoom slow = room(32, true);
        slow.recordRun(MS);
        slow.recordClaim(25 * MS);
        // 4 threads end 200 jobs of 1 ms during two claims of 25 ms
        assertThat(slow.prefetchAllowance()).isEqualTo(200);

        ClaimRoom slower = room(32, true);
        slower.recordRun(MS / 10);
        slower.recordClaim(40 * MS);
        assertThat(slower.prefetchAllowance()).isEqualTo(ClaimRoom.MAX_GROWN_PREFETCH);
    }

    @Test
    void claimsSlowerThan50msLengthenTheHorizonForLongerJobsToo() {
        ClaimRoom slow = room(32, true);
        slow.recordRun(40 * MS);
        slow.recordClaim(100 * MS);
        // two claims of 100 ms: 4 threads end 20 jobs of 40 ms in 200 ms
        assertThat(slow.prefetchAllowance()).isEqualTo(20);
    }

    @Test
    void anExplicitPrefetchIsALimitWhateverTheClaimsCost() {
        ClaimRoom explicit = room(32, false);
        explicit.recordRun(MS);
        explicit.recordClaim(25 * MS);
        assertThat(explicit.prefetchAllowance()).isEqualTo(32);
    }

    @Test
    void theAverageFollowsClaimsAsTheyChange() {
        ClaimRoom room = room(32, true);
        room.recordRun(MS);
        room.recordClaim(25 * MS);
        assertThat(room.prefetchAllowance()).isEqualTo(200);
        for (int i = 0; i < 200; i++) {
            room.recordClaim(MS / 2);
        }
        // the horizon is back in the hold
        assertThat(room.prefetchAllowance()).isEqualTo(32);
    }
}
