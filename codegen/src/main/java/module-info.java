/**
 * The jOOQ classes generated from the locksmith schema: the {@code Locksmith} schema, its tables
 * and their records. Core uses them at run time; applications may use them for their own
 * queries on locksmith's tables (reports, joins with their own tables).
 */
module dev.locksmith.codegen {
    requires transitive org.jooq;

    exports dev.locksmith.codegen;
    exports dev.locksmith.codegen.tables;
    exports dev.locksmith.codegen.tables.records;
}
