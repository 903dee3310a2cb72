/**
 * The locksmith changelog applied by every supported Liquibase version, each run as the stock
 * command line in its own JVM ({@link dev.locksmith.compat.ForkedLiquibase}) from the jars a
 * module under {@code liquibase-compat/distributions} copied ({@link
 * dev.locksmith.compat.LiquibaseDistribution}), against a real PostgreSQL; and
 * {@code LocksmithSchema.migrate} with each of those versions, for what it prints and logs
 * ({@link dev.locksmith.compat.LocksmithSchemaLoggingTest}).
 */
package dev.locksmith.compat;
