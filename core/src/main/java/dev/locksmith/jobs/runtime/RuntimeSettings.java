package dev.locksmith.jobs.runtime;

import java.time.Duration;
import java.util.Set;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * The settings every worker has, as its builder validated them. <b>Internal: not API.</b>
 *
 * @param queue the queue worked
 * @param threads handler threads (and the most jobs in hand, beside those claimed ahead)
 * @param virtualThreads whether handlers run on virtual threads
 * @param pollInterval the longest idle wait without a notification
 * @param minPollInterval the shortest wait between polls while no LISTEN connection is up
 * @param listen whether a LISTEN connection wakes idle threads
 * @param listenSource where the LISTEN connection comes from when not from the worker's pool
 * @param shards the shards claimed from; empty for all
 * @param shutdownGrace how long {@code close()} lets handlers finish, and waits again after
 *     interrupting them
 * @param workerId written to {@code locked_by}, and named in logs
 * @param handlerFailureLogLevel the level of a failed attempt that will be retried
 * @param vacuumInterval how often the jobs table's dead rows are looked at; zero for never
 * @param horizonWarnAfter how long something may hold the MVCC horizon back before it is logged;
 *     zero for never
 * @param log the worker's logger (named for its public class)
 */
public record RuntimeSettings(
        String queue,
        int threads,
        boolean virtualThreads,
        Duration pollInterval,
        Duration minPollInterval,
        boolean listen,
        @Nullable DataSource listenSource,
        Set<Integer> shards,
        Duration shutdownGrace,
        String workerId,
        Level handlerFailureLogLevel,
        Duration vacuumInterval,
        Duration horizonWarnAfter,
        Logger log) {

    /** {@return whether the LISTEN connection is one of the worker's pool's} */
    public boolean listensOnPool() {
        return listen && listenSource == null;
    }
}
