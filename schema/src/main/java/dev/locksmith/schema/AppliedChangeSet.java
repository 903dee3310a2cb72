package dev.locksmith.schema;

import java.time.Instant;

/**
 * One change set as recorded by Liquibase in {@code databasechangelog}.
 *
 * @param id the change set id, for example {@code 002-jobs}
 * @param author the change set author
 * @param file the logical file path Liquibase recorded, for example {@code locksmith/002-jobs.xml}
 * @param executedAt when it was applied (database time)
 */
public record AppliedChangeSet(String id, String author, String file, Instant executedAt) {}
