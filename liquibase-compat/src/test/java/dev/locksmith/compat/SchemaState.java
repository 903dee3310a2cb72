package dev.locksmith.compat;

import dev.locksmith.provisioning.ScratchDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** What a migrated database holds, read over JDBC from the test JVM. */
final class SchemaState {

    private SchemaState() {}

    /** The tables in {@code schema}, by name. */
    static List<String> tables(ScratchDatabase database, String schema) {
        return rows(
                database,
                "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = ? ORDER BY tablename COLLATE \"C\"",
                schema);
    }

    /** Whether {@code schema} exists. */
    static boolean schemaExists(ScratchDatabase database, String schema) {
        return !rows(database, "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ?", schema)
                .isEmpty();
    }

    /**
     * Every row of Liquibase's {@code databasechangelog} (in the connection's default schema, where
     * the stock CLI keeps it), in execution order, all columns that a later run could rewrite.
     */
    static List<String> changeLog(ScratchDatabase database) {
        return rows(
                database,
                "SELECT id, author, filename, dateexecuted, orderexecuted, exectype, md5sum,"
                        + " deployment_id, liquibase FROM databasechangelog ORDER BY orderexecuted, id");
    }

    /**
     * The shape of every relation in {@code schema}: columns with types, defaults and
     * nullability, constraints, indexes and storage options. Equal before and after a run means
     * the run changed no DDL there.
     */
    static List<String> shape(ScratchDatabase database, String schema) {
        return rows(
                database,
                ""
                        + "SELECT 'relation', c.relname, c.relkind::text, coalesce(array_to_string(c.reloptions, ','), '')"
                        + "  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?"
                        + " UNION ALL "
                        + "SELECT 'column', c.relname || '.' || a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),"
                        + "       a.attnotnull::text || ' ' || a.attgenerated::text || ' ' || coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '')"
                        + "  FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid"
                        + "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                        + "  LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
                        + " WHERE n.nspname = ? AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped"
                        + " UNION ALL "
                        + "SELECT 'constraint', c.relname || '.' || k.conname, k.contype::text, pg_catalog.pg_get_constraintdef(k.oid)"
                        + "  FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.conrelid"
                        + "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?"
                        + " UNION ALL "
                        + "SELECT 'index', i.indexname, i.tablename, i.indexdef FROM pg_catalog.pg_indexes i WHERE i.schemaname = ?"
                        + " ORDER BY 1, 2",
                schema,
                schema,
                schema,
                schema);
    }

    private static List<String> rows(ScratchDatabase database, String sql, String... parameters) {
        try (Connection connection = database.dataSource().getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setString(i + 1, parameters[i]);
            }
            List<String> rows = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                ResultSetMetaData meta = rs.getMetaData();
                while (rs.next()) {
                    StringBuilder row = new StringBuilder();
                    for (int column = 1; column <= meta.getColumnCount(); column++) {
                        row.append(column == 1 ? "" : " | ").append(rs.getString(column));
                    }
                    rows.add(row.toString());
                }
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException("on " + database.name() + ": " + sql + ": " + e.getMessage(), e);
        }
    }
}
