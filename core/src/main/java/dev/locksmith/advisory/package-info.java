/**
 * PostgreSQL advisory locks on business keys: transaction-scoped locks (released at commit or
 * rollback, safe behind any pooler) and session locks held on a dedicated connection
 * ({@link dev.locksmith.advisory.SessionLock}, refused when the connections go through
 * PgBouncer in transaction mode). {@link dev.locksmith.advisory.AdvisoryKey} maps a namespace
 * and a business key to the lock's two ints by a documented, stable hash.
 */
@NullMarked
package dev.locksmith.advisory;

import org.jspecify.annotations.NullMarked;
