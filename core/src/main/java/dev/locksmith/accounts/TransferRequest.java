package dev.locksmith.accounts;

import dev.locksmith.internal.Texts;
import java.math.BigDecimal;
import java.util.Objects;
import java.util.Optional;

/**
 * A transfer to make with {@link Accounts#transfer(TransferRequest)}: validated when built, so a
 * bad request fails before anything is written.
 *
 * <pre>{@code
 * TransferResult result = accounts.transfer(
 *         TransferRequest.of(from, to, new BigDecimal("25.00"), TransferStrategy.ATOMIC_GUARD)
 *                 .withTransferId("order-4711-payment"));
 * }</pre>
 *
 * @param from the account debited
 * @param to the account credited; not {@code from}
 * @param amount positive, at most two decimal places ({@link Amounts}); normalized to scale 2
 * @param strategy how concurrent transfers are kept correct
 * @param transferId the caller's id for this transfer, making it idempotent: the first
 *     transfer with an id that moves the money records the id in the same transaction
 *     ({@code account_transfers}); a later transfer with the same id and the same accounts
 *     and amount changes nothing and reports {@link TransferResult.Status#ALREADY_TRANSFERRED}.
 *     Give one when a retry must be safe, above all after a
 *     {@link dev.locksmith.exception.CommitOutcomeUnknownException}. 1 to {@value #MAX_TRANSFER_ID_LENGTH}
 *     characters, not blank. A transfer that found insufficient funds records nothing, so the
 *     same id can be tried again later.
 */
public record TransferRequest(
        long from, long to, BigDecimal amount, TransferStrategy strategy, Optional<String> transferId) {

    /** Longest transfer id. */
    public static final int MAX_TRANSFER_ID_LENGTH = 200;

    /**
     * Validates every field; see the record's description.
     *
     * @param from the account debited
     * @param to the account credited; must differ from {@code from}
     * @param amount positive, at most two decimal places; stored at scale 2
     * @param strategy how concurrent transfers are kept correct
     * @param transferId the caller's id, or empty; when present 1 to
     *     {@value #MAX_TRANSFER_ID_LENGTH} characters, not blank
     * @throws IllegalArgumentException naming the invalid field
     * @throws NullPointerException when {@code amount}, {@code strategy} or {@code transferId} is null
     */
    public TransferRequest {
        Objects.requireNonNull(strategy, "strategy");
        if (from == to) {
            throw new IllegalArgumentException("cannot transfer from account " + from + " to itself");
        }
        amount = Amounts.positive("amount", amount);
        Objects.requireNonNull(transferId, "transferId");
        transferId.ifPresent(TransferRequest::requireTransferId);
    }

    /**
     * A transfer without an id: not idempotent, so after a
     * {@link dev.locksmith.exception.CommitOutcomeUnknownException} the caller cannot tell whether to try
     * again.
     *
     * @param from the account debited
     * @param to the account credited; must differ from {@code from}
     * @param amount positive, at most two decimal places
     * @param strategy how concurrent transfers are kept correct
     * @return the validated request
     * @throws IllegalArgumentException naming the invalid field
     */
    public static TransferRequest of(long from, long to, BigDecimal amount, TransferStrategy strategy) {
        return new TransferRequest(from, to, amount, strategy, Optional.empty());
    }

    /**
     * This transfer with the caller's id, which makes it idempotent.
     *
     * @param transferId 1 to {@value #MAX_TRANSFER_ID_LENGTH} characters, not blank; unique per
     *     transfer the caller means (an order's payment id, for example)
     * @return a new request with the id; this one is unchanged
     * @throws IllegalArgumentException when the id is blank or too long
     */
    public TransferRequest withTransferId(String transferId) {
        return new TransferRequest(from, to, amount, strategy, Optional.of(requireTransferId(transferId)));
    }

    private static String requireTransferId(String transferId) {
        Objects.requireNonNull(transferId, "transferId");
        if (transferId.isBlank()) {
            throw new IllegalArgumentException("transferId must not be blank");
        }
        if (transferId.length() > MAX_TRANSFER_ID_LENGTH) {
            throw new IllegalArgumentException(
                    "transferId must be at most " + MAX_TRANSFER_ID_LENGTH + " characters, was " + transferId.length());
        }
        return Texts.requireStorable("transferId", transferId);
    }
}
