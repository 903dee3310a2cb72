package dev.locksmith.schema;

/** Applying or rolling back the locksmith schema failed; the cause says why. */
public final class SchemaMigrationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SchemaMigrationException(String message, Throwable cause) {
        super(message, cause);
    }
}
