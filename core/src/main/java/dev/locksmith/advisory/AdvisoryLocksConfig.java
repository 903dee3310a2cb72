package dev.locksmith.advisory;

import dev.locksmith.PoolingMode;
import java.util.Objects;

/**
 * Settings of a {@link AdvisoryLocks}, built with {@link #builder()}. Immutable.
 *
 * <p>Defaults ({@link #defaults()}): {@link PoolingMode#SESSION}.
 */
public final class AdvisoryLocksConfig {

    private static final AdvisoryLocksConfig DEFAULTS = builder().build();

    private final PoolingMode poolingMode;

    private AdvisoryLocksConfig(Builder b) {
        this.poolingMode = b.poolingMode;
    }

    /**
     * The defaults listed on the class.
     *
     * @return the default settings
     */
    public static AdvisoryLocksConfig defaults() {
        return DEFAULTS;
    }

    /**
     * A builder starting from the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * How connections reach the server; with {@link PoolingMode#TRANSACTION} the session-lock
     * methods refuse.
     *
     * @return the pooling mode
     */
    public PoolingMode poolingMode() {
        return poolingMode;
    }

    /**
     * A builder holding these settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.poolingMode = poolingMode;
        return b;
    }

    @Override
    public String toString() {
        return "AdvisoryLocksConfig[poolingMode=" + poolingMode + "]";
    }

    /** Builds a {@link AdvisoryLocksConfig}; each setter validates its argument. */
    public static final class Builder {
        private PoolingMode poolingMode = PoolingMode.SESSION;

        private Builder() {}

        /**
         * How the data source's connections reach the server (default {@link PoolingMode#SESSION}:
         * directly, or through a client-side pool or PgBouncer in session mode). Say
         * {@link PoolingMode#TRANSACTION} behind PgBouncer in transaction mode, so that session
         * locks, which would not hold there, are refused.
         *
         * @param poolingMode the mode
         * @return this builder
         */
        public Builder poolingMode(PoolingMode poolingMode) {
            this.poolingMode = Objects.requireNonNull(poolingMode, "poolingMode");
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public AdvisoryLocksConfig build() {
            return new AdvisoryLocksConfig(this);
        }
    }
}
