/**
 * The exception family. Every failure of a locksmith call is a {@link LocksmithException}
 * (unchecked), translated from PostgreSQL's SQLState in one place, {@link PgErrors}, which also
 * feeds the retry policy and the lock audit: {@link DeadlockException} ({@code 40P01}),
 * {@link SerializationFailureException} ({@code 40001}), {@link LockNotAvailableException}
 * ({@code 55P03}), {@link UniqueViolationException} ({@code 23505}),
 * {@link StatementTimeoutException} ({@code 57014}) and the others. The ones a retry of the
 * whole transaction may cure extend {@link TransientLocksmithException}. Expected outcomes (no job
 * to claim, no idle account, a lost optimistic race when the caller asked to try once) are
 * values, not exceptions.
 */
@NullMarked
package dev.locksmith.exception;

import org.jspecify.annotations.NullMarked;
