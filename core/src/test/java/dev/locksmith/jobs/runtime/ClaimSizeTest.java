package dev.locksmith.jobs.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.jobs.Claim;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class ClaimSizeTest {

    @Test
    void smallClaimsAreExact() {
        for (int n = 0; n <= 16; n++) {
            assertThat(ClaimRoom.claimSize(n)).isEqualTo(n);
        }
    }

    @Test
    void largerClaimsRoundDownToTwoStepsPerPowerOfTwo() {
        assertThat(ClaimRoom.claimSize(17)).isEqualTo(16);
        assertThat(ClaimRoom.claimSize(23)).isEqualTo(16);
        assertThat(ClaimRoom.claimSize(24)).isEqualTo(24);
        assertThat(ClaimRoom.claimSize(47)).isEqualTo(32);
        assertThat(ClaimRoom.claimSize(48)).isEqualTo(48);
        assertThat(ClaimRoom.claimSize(502)).isEqualTo(384);
        assertThat(ClaimRoom.claimSize(1004)).isEqualTo(768);
        assertThat(ClaimRoom.claimSize(1024)).isEqualTo(1024);
        assertThat(ClaimRoom.claimSize(Claim.MAX_LIMIT)).isEqualTo(8192);
    }

    @Test
    void everySizeUpToTheLargestClaimIsLessThanAThirdShortAndFewSizesAreUsed() {
        TreeSet<Integer> sizes = new TreeSet<>();
        for (int n = 1; n <= Claim.MAX_LIMIT; n++) {
            int size = ClaimRoom.claimSize(n);
            assertThat(size).isLessThanOrEqualTo(n).isGreaterThan(n * 2 / 3);
            sizes.add(size);
        }
        // 1..16, then two per power of two up to 8,192: each statement text is seen often
        // enough on a connection for PgJDBC to prepare it (and read its rows in binary)
        assertThat(sizes).hasSize(16 + 2 * 9);
    }
}
