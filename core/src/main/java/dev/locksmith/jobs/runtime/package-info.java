/**
 * The one worker loop ({@link dev.locksmith.jobs.runtime.WorkerRuntime}: threads, wake-up by
 * NOTIFY and polling, LISTEN, vacuum, periodic tasks, start and close) and the modes that differ
 * in how they claim, run and settle: leased, transactional and two-phase. The public workers of
 * {@code dev.locksmith.jobs} are this runtime with one mode each. <b>Not API</b>: the module does
 * not export this package.
 */
@NullMarked
package dev.locksmith.jobs.runtime;

import org.jspecify.annotations.NullMarked;
