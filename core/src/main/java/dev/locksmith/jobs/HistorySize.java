package dev.locksmith.jobs;

/**
 * How big the history of finished jobs ({@code job_history}) is, by PostgreSQL's statistics rather
 * than by counting: reading it costs a few catalog rows whether the history holds a thousand rows
 * or a hundred million.
 *
 * @param estimatedRows rows by {@code pg_class.reltuples} summed over the partitions, as of their
 *     last ANALYZE (autovacuum's or a VACUUM's); a partition never analyzed counts 0, so a
 *     history filled since the last ANALYZE reads low
 * @param partitions the partitions, the default partition included
 */
public record HistorySize(long estimatedRows, int partitions) {}
