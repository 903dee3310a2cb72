/**
 * What every part of locksmith shares: the environment repositories and workers are built from
 * ({@link dev.locksmith.Locksmith}: schema, pooling mode, execution mode, observers), running a
 * whole transaction with retries ({@link dev.locksmith.Transactions} under a
 * {@link dev.locksmith.RetryPolicy}), and bounding lock waits ({@link dev.locksmith.LockWait}:
 * forever, up to a duration, {@code NOWAIT}, {@code SKIP LOCKED}). Every failure is a
 * {@link dev.locksmith.exception.LocksmithException} (package {@code dev.locksmith.exception}).
 *
 * <p>Conventions of the whole API: a method that takes a {@code DSLContext tx} runs in the
 * caller's transaction (pass the {@code DSLContext} of {@code dsl.transaction(...)}); a method
 * without one opens and commits its own. Repositories are built from a {@code Locksmith} (or, with
 * every default, a {@code DSLContext}) and, optionally, one immutable settings object made by a
 * builder. Arguments are never null unless
 * documented; expected outcomes (nothing to claim, no idle account) are values
 * ({@code Optional}, result records), not exceptions.
 */
@NullMarked
package dev.locksmith;

import org.jspecify.annotations.NullMarked;
