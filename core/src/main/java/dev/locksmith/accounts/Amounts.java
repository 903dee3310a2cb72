package dev.locksmith.accounts;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * Validation of money amounts. The column is {@code numeric(20,2)}: amounts are normalized to
 * scale 2 and never rounded; a value that needs a third decimal place is rejected.
 */
public final class Amounts {

    /** Decimal places of every balance and amount. */
    public static final int SCALE = 2;

    /** Largest value the column holds: 10^18 - 0.01. */
    public static final BigDecimal MAX = new BigDecimal("999999999999999999.99");

    private Amounts() {}

    /** {@code amount} at scale 2; rejects null, excess scale and values beyond {@link #MAX}. */
    static BigDecimal normalize(String what, BigDecimal amount) {
        Objects.requireNonNull(amount, what);
        BigDecimal scaled;
        try {
            scaled = amount.setScale(SCALE, RoundingMode.UNNECESSARY);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    what + " " + amount.toPlainString() + " has more than " + SCALE
                            + " decimal places; locksmith never rounds money",
                    e);
        }
        if (scaled.abs().compareTo(MAX) > 0) {
            throw new IllegalArgumentException(what + " " + amount.toPlainString() + " exceeds " + MAX.toPlainString());
        }
        return scaled;
    }

    /** A strictly positive amount at scale 2. */
    static BigDecimal positive(String what, BigDecimal amount) {
        BigDecimal scaled = normalize(what, amount);
        if (scaled.signum() <= 0) {
            throw new IllegalArgumentException(what + " must be positive, was " + scaled.toPlainString());
        }
        return scaled;
    }

    /** A zero or positive amount at scale 2. */
    static BigDecimal nonNegative(String what, BigDecimal amount) {
        BigDecimal scaled = normalize(what, amount);
        if (scaled.signum() < 0) {
            throw new IllegalArgumentException(what + " must not be negative, was " + scaled.toPlainString());
        }
        return scaled;
    }
}
