package dev.locksmith.exception;

/**
 * A locksmith table does not exist ({@code 42P01}): the schema module that creates it was not
 * applied to this database, or was applied to another schema than the one the repositories
 * render. The message names the module to apply.
 */
public final class SchemaNotAppliedException extends LocksmithException {
    private static final long serialVersionUID = 1L;

    /** The missing table, as PostgreSQL named it. */
    private final String table;
    /** The schema module that creates it. */
    private final String module;

    SchemaNotAppliedException(String message, String sqlState, String table, String module, Throwable cause) {
        super(message, sqlState, cause);
        this.table = table;
        this.module = module;
    }

    /** {@return the missing table, as PostgreSQL named it (schema-qualified when the statement was)} */
    public String table() {
        return table;
    }

    /**
     * The schema module to apply.
     *
     * @return the module that creates the table: {@code QUEUE}, {@code POOL}, {@code ACCOUNTS} or
     *     {@code AUDIT}, a constant name of {@code dev.locksmith.schema.SchemaModule}
     */
    public String module() {
        return module;
    }
}
