package dev.locksmith.schema;

/**
 * The parts of the locksmith schema a team can apply alone. Each is a changelog of its own on
 * the classpath; {@link LocksmithSchema#CHANGELOG} includes them all.
 */
public enum SchemaModule {
    /**
     * {@code jobs} and {@code schedules}: the job queue ({@code JobQueue}, {@code JobWorker},
     * {@code TransactionalWorker}) and its recurring schedules ({@code Schedules}).
     */
    QUEUE("db/locksmith/queue.xml", "jobs"),
    /** {@code channel_accounts}: the channel account pool ({@code ChannelAccountPool}). */
    POOL("db/locksmith/pool.xml", "channel_accounts"),
    /** {@code accounts} and {@code account_transfers}: balances and transfers ({@code Accounts}). */
    ACCOUNTS("db/locksmith/accounts.xml", "accounts"),
    /** {@code lock_wait_event} and {@code deadlock_event}: the lock audit ({@code LockAudit}). */
    AUDIT("db/locksmith/audit.xml", "lock_wait_event");

    private final String changelog;
    private final String mainTable;

    SchemaModule(String changelog, String mainTable) {
        this.changelog = changelog;
        this.mainTable = mainTable;
    }

    /** {@return the classpath location of this module's changelog} */
    public String changelog() {
        return changelog;
    }

    /** {@return the table whose presence shows the module was applied} */
    public String mainTable() {
        return mainTable;
    }
}
