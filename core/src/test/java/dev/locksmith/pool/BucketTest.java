package dev.locksmith.pool;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * An account's bucket on Citus: the first 28 bits of the md5 of its key's UTF-8 bytes modulo the
 * bucket count, the same as change set pool-006 computes in SQL
 * ({@code mod(('x' || substr(md5(public_key), 1, 7))::bit(28)::int, n)}). The expected values
 * are those md5 prefixes taken by hand (CitusPoolTest compares with the SQL on a cluster).
 */
class BucketTest {

    @Test
    void theBucketIsTheFirst28BitsOfTheKeysMd5ModuloTheBucketCount() {
        // md5('GCITUS0') = fd0454f..., 0xfd0454f = 265307471
        assertThat(ChannelAccountPool.bucketOf("GCITUS0", 32))
                .isEqualTo(0xfd0454f % 32)
                .isEqualTo(15);
        assertThat(ChannelAccountPool.bucketOf("GCITUS0", 7)).isEqualTo(2);
        // md5('G00000001') = f0cfa7c...
        assertThat(ChannelAccountPool.bucketOf("G00000001", 32)).isEqualTo(28);
        // UTF-8 bytes, as PostgreSQL's md5(text) in a UTF8 database: md5('ключ-é') = 1fe155a...
        assertThat(ChannelAccountPool.bucketOf("ключ-é", 32)).isEqualTo(26);
    }

    @Test
    void onOneServerEveryAccountIsInBucketZero() {
        assertThat(ChannelAccountPool.bucketOf("GCITUS0", 0)).isZero();
        assertThat(ChannelAccountPool.bucketOf("anything", 0)).isZero();
    }
}
