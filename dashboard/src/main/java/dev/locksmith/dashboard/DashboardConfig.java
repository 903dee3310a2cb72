package dev.locksmith.dashboard;

import dev.locksmith.Locksmith;
import java.time.Duration;
import java.util.Objects;
import org.jooq.DSLContext;

/**
 * What a dashboard reads and what it may do, built with {@link #builder(Locksmith)}. Immutable;
 * shared by the {@link Dashboard} server and the {@link DashboardServlet}.
 *
 * <p>Defaults: read-only (no action is offered, and every action request is refused with 403),
 * pages refresh their live part every 2 s, each read runs with a {@code statement_timeout} of
 * 5 s, lists show 50 rows a page, and queue counts stop at 10,000 (shown as "10,000+").
 */
public final class DashboardConfig {

    private final DSLContext dsl;
    private final String schema;
    private final boolean readOnly;
    private final Duration refreshInterval;
    private final Duration statementTimeout;
    private final int pageSize;
    private final int countCap;
    private final String title;

    private DashboardConfig(Builder b) {
        this.dsl = b.locksmith.dsl();
        this.schema = b.locksmith.schema();
        this.readOnly = b.readOnly;
        this.refreshInterval = b.refreshInterval;
        this.statementTimeout = b.statementTimeout;
        this.pageSize = b.pageSize;
        this.countCap = b.countCap;
        this.title = b.title;
    }

    /**
     * A builder for a dashboard in {@code locksmith}'s environment: its schema says where
     * locksmith's tables are.
     *
     * @param locksmith an environment on a pool or data source (not a transaction): each page
     *     borrows a connection for a read-only transaction of its own, and each action for one
     *     transaction
     * @return a new builder with the defaults listed on the class
     */
    public static Builder builder(Locksmith locksmith) {
        return new Builder(Objects.requireNonNull(locksmith, "locksmith"));
    }

    /**
     * A builder for a dashboard on {@code dsl}'s database, locksmith's tables in the default
     * schema: {@code builder(Locksmith.of(dsl))}.
     *
     * @param dsl a {@code DSLContext} on a pool or data source (not a transaction)
     * @return a new builder with the defaults listed on the class
     */
    public static Builder builder(DSLContext dsl) {
        return builder(Locksmith.of(Objects.requireNonNull(dsl, "dsl")));
    }

    /** {@return the {@code DSLContext} the dashboard uses, rendering locksmith's tables in {@link #schema()}} */
    public DSLContext dsl() {
        return dsl;
    }

    /** {@return the schema of locksmith's tables} */
    public String schema() {
        return schema;
    }

    /** {@return true when no action (retry, cancel, delete) is allowed} */
    public boolean readOnly() {
        return readOnly;
    }

    /** {@return how often a page refreshes its live part; zero for never} */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /** {@return the {@code statement_timeout} of every read} */
    public Duration statementTimeout() {
        return statementTimeout;
    }

    /** {@return rows per page of a job list} */
    public int pageSize() {
        return pageSize;
    }

    /** {@return where pending and running counts stop} */
    public int countCap() {
        return countCap;
    }

    /** {@return the name shown in the page title and header} */
    public String title() {
        return title;
    }

    @Override
    public String toString() {
        return "DashboardConfig[schema=" + schema() + ", readOnly=" + readOnly + ", refreshInterval="
                + refreshInterval + ", statementTimeout=" + statementTimeout + ", pageSize=" + pageSize
                + ", countCap=" + countCap + ", title=" + title + "]";
    }

    /** Builds a {@link DashboardConfig}; each setter validates its argument and names it when refusing. */
    public static final class Builder {
        private final Locksmith locksmith;
        private boolean readOnly = true;
        private Duration refreshInterval = Duration.ofSeconds(2);
        private Duration statementTimeout = Duration.ofSeconds(5);
        private int pageSize = 50;
        private int countCap = 10_000;
        private String title = "locksmith";

        private Builder(Locksmith locksmith) {
            this.locksmith = locksmith;
        }

        /**
         * Whether the dashboard only reads (default true). When false, a job's page offers retry
         * (failed or cancelled jobs), cancel (pending or running) and delete (finished), each
         * confirmed on a page of its own, protected against cross-site requests, and run in one
         * transaction.
         *
         * @param readOnly false to allow actions
         * @return this builder
         */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * How often a page's live part is fetched again in the browser (default 2 s); zero turns
         * refreshing off.
         *
         * @param interval zero, or 500 ms to 1 hour
         * @return this builder
         * @throws IllegalArgumentException when {@code interval} is out of range
         */
        public Builder refreshInterval(Duration interval) {
            Objects.requireNonNull(interval, "refreshInterval");
            if (!interval.isZero()
                    && (interval.compareTo(Duration.ofMillis(500)) < 0
                            || interval.compareTo(Duration.ofHours(1)) > 0)) {
                throw new IllegalArgumentException(
                        "refreshInterval must be zero or between 500 ms and 1 h, was " + interval);
            }
            this.refreshInterval = interval;
            return this;
        }

        /**
         * The {@code statement_timeout} of each read (default 5 s), set with
         * {@code set_config(..., true)} for the read's own transaction only: a read that takes
         * longer is cancelled and its part of the page says so, instead of the page hanging.
         *
         * @param timeout 10 ms to 10 minutes
         * @return this builder
         * @throws IllegalArgumentException when {@code timeout} is out of range
         */
        public Builder statementTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "statementTimeout");
            if (timeout.compareTo(Duration.ofMillis(10)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException(
                        "statementTimeout must be between 10 ms and 10 minutes, was " + timeout);
            }
            this.statementTimeout = timeout;
            return this;
        }

        /**
         * Rows per page of a job list (default 50).
         *
         * @param pageSize 1 to 500
         * @return this builder
         * @throws IllegalArgumentException when {@code pageSize} is out of range
         */
        public Builder pageSize(int pageSize) {
            if (pageSize < 1 || pageSize > 500) {
                throw new IllegalArgumentException("pageSize must be between 1 and 500, was " + pageSize);
            }
            this.pageSize = pageSize;
            return this;
        }

        /**
         * Where pending and running counts stop (default 10,000): the work of counting is bounded
         * by it whatever the table holds.
         *
         * @param countCap 1 to 1,000,000
         * @return this builder
         * @throws IllegalArgumentException when {@code countCap} is out of range
         */
        public Builder countCap(int countCap) {
            if (countCap < 1 || countCap > 1_000_000) {
                throw new IllegalArgumentException("countCap must be between 1 and 1000000, was " + countCap);
            }
            this.countCap = countCap;
            return this;
        }

        /**
         * The name in the page title and header (default "locksmith"), e.g. the service's name.
         *
         * @param title 1 to 100 characters
         * @return this builder
         * @throws IllegalArgumentException when {@code title} is blank or longer than 100 characters
         */
        public Builder title(String title) {
            Objects.requireNonNull(title, "title");
            if (title.isBlank() || title.length() > 100) {
                throw new IllegalArgumentException(
                        "title must be 1 to 100 characters and not blank, was '" + title + "'");
            }
            this.title = title;
            return this;
        }

        /**
         * The settings.
         *
         * @return an immutable config
         */
        public DashboardConfig build() {
            return new DashboardConfig(this);
        }
    }
}
