/**
 * Who waited for whom: {@link dev.locksmith.audit.LockAudit} guards statements, and records
 * lock waits that failed (or, if asked, took long) and deadlocks, with the blocking sessions,
 * in the {@code lock_wait_event} and {@code deadlock_event} tables, written off the caller's
 * thread. {@link dev.locksmith.audit.BlockingReport} reads {@code pg_blocking_pids()} now;
 * {@link dev.locksmith.audit.HorizonReport} names what holds the database's MVCC horizon back now
 * (sessions, replication slots, prepared transactions, standbys), each a
 * {@link dev.locksmith.audit.HorizonHolder}.
 */
@NullMarked
package dev.locksmith.audit;

import org.jspecify.annotations.NullMarked;
