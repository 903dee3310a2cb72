package dev.locksmith.accounts;

import java.math.BigDecimal;
import java.time.OffsetDateTime;

/**
 * An account as read from the {@code accounts} table.
 *
 * @param id the account id
 * @param balance the balance, scale 2, never negative
 * @param version bumped by every write; the token for optimistic compare-and-swap
 * @param updatedAt when it was last written (database clock)
 */
public record Account(long id, BigDecimal balance, long version, OffsetDateTime updatedAt) {
}
