package dev.locksmith.accounts;

import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An account as read from the {@code accounts} table.
 *
 * @param id the account id
 * @param balance the balance, scale 2, never negative
 * @param version bumped by every write; the token for optimistic compare-and-swap
 * @param updatedAt when it was last written (database clock); null in the account that
 *     {@link Accounts#updateOptimistically(org.jooq.DSLContext, long, java.util.function.UnaryOperator)}
 *     returns, which does not read the time of its write back
 */
public record Account(
        long id, BigDecimal balance, long version, @Nullable OffsetDateTime updatedAt) {

    /**
     * Checks what the table guarantees of every account.
     *
     * @param id the account's id
     * @param balance its balance; not null
     * @param version its version, raised by every change
     * @param updatedAt when it last changed, or null
     * @throws NullPointerException when the balance is null
     */
    public Account {
        Objects.requireNonNull(balance, "balance");
    }
}
