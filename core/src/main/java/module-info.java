/**
 * locksmith's repositories: typed PostgreSQL concurrency control through jOOQ. Exports the API
 * packages; {@code dev.locksmith.internal} is not exported, so an application module cannot
 * reach it (on the class path it is reachable, but it is not API and changes without notice).
 */
module dev.locksmith.core {
    requires transitive java.sql;
    requires java.management;
    requires transitive org.jooq;
    requires dev.locksmith.codegen;
    requires org.postgresql.jdbc;
    requires transitive org.slf4j;
    // Cron expressions of recurring schedules; an automatic module (Automatic-Module-Name), and
    // no cron-utils type appears in the API, so not transitive.
    requires com.cronutils;
    // The default codec of typed jobs (JacksonJobCodec): optional at run time, so static.
    requires static com.fasterxml.jackson.databind;
    requires static com.fasterxml.jackson.datatype.jsr310;
    // The API's nullness annotations: static, as nothing needs them at run time; transitive, as
    // they are part of the exported signatures (without it javac's exports lint objects).
    requires static transitive org.jspecify;

    exports dev.locksmith;
    exports dev.locksmith.accounts;
    exports dev.locksmith.advisory;
    exports dev.locksmith.audit;
    exports dev.locksmith.exception;
    exports dev.locksmith.jobs;
    exports dev.locksmith.observe;
    exports dev.locksmith.pool;
    exports dev.locksmith.schedules;
}
