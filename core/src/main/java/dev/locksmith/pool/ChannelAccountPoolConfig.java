package dev.locksmith.pool;

import java.util.Objects;

/**
 * Settings of a {@link ChannelAccountPool}, built with {@link #builder()}. Immutable.
 *
 * <p>Defaults ({@link #defaults()}): {@link AcquireStrategy#RANDOM_PROBES}.
 */
public final class ChannelAccountPoolConfig {

    private static final ChannelAccountPoolConfig DEFAULTS = builder().build();

    private final AcquireStrategy strategy;

    private ChannelAccountPoolConfig(Builder b) {
        this.strategy = b.strategy;
    }

    /**
     * The defaults listed on the class.
     *
     * @return the default settings
     */
    public static ChannelAccountPoolConfig defaults() {
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
     * How an idle account is chosen.
     *
     * @return the strategy
     */
    public AcquireStrategy strategy() {
        return strategy;
    }

    /**
     * A builder holding these settings, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.strategy = strategy;
        return b;
    }

    @Override
    public String toString() {
        return "ChannelAccountPoolConfig[strategy=" + strategy + "]";
    }

    /** Builds a {@link ChannelAccountPoolConfig}; each setter validates its argument. */
    public static final class Builder {
        private AcquireStrategy strategy = AcquireStrategy.RANDOM_PROBES;

        private Builder() {}

        /**
         * How an idle account is chosen (default {@link AcquireStrategy#RANDOM_PROBES}).
         *
         * @param strategy the strategy
         * @return this builder
         */
        public Builder strategy(AcquireStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public ChannelAccountPoolConfig build() {
            return new ChannelAccountPoolConfig(this);
        }
    }
}
