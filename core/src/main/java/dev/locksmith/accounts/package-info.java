/**
 * Balances that many transactions change at once, with the four ways to keep them right
 * ({@link dev.locksmith.accounts.TransferStrategy}): {@code SELECT ... FOR UPDATE} in id order,
 * an optimistic compare-and-swap on the {@code version} column, one guarded atomic
 * {@code UPDATE}, and SERIALIZABLE with retry. {@link dev.locksmith.accounts.Accounts} is the
 * repository; a transfer with a transfer id is applied at most once, also when the outcome of
 * its {@code COMMIT} had to be looked up.
 */
@NullMarked
package dev.locksmith.accounts;

import org.jspecify.annotations.NullMarked;
