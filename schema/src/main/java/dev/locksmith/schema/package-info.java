/**
 * The locksmith schema: Liquibase changelogs under {@code db/locksmith/} (one per module:
 * queue, pool, accounts, audit; {@code changelog.xml} includes all four), and
 * {@link dev.locksmith.schema.LocksmithSchema}, which applies them at service start-up into a
 * schema of their own. Usable without the rest of locksmith: a deployment pipeline needs only
 * this jar and Liquibase.
 */
@NullMarked
package dev.locksmith.schema;

import org.jspecify.annotations.NullMarked;
