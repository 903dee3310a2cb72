package dev.locksmith.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Plain JDBC helpers for the raw baselines: a pooled connection per transaction, as the library does. */
final class Jdbc {

    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private Jdbc() {}

    /** Runs {@code work} in one transaction on a connection borrowed from {@code ds}. */
    static <T> T inTransaction(DataSource ds, Work<T> work) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    /** Runs {@code work} in auto-commit mode on a borrowed connection. */
    static <T> T autoCommit(DataSource ds, Work<T> work) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return work.run(c);
        }
    }

    /** Executes a statement with bind values. */
    static int update(Connection c, String sql, Object... binds) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < binds.length; i++) {
                s.setObject(i + 1, binds[i]);
            }
            return s.executeUpdate();
        }
    }

    /** A single long from a query with bind values. */
    /**
     * How many shards Citus splits {@code table} into (of the connection's search path), or 1 on
     * one server: seeding spreads rows over them ({@code n % shards}) as the library does.
     */
    static long shards(Connection c, String table) throws SQLException {
        if (queryLong(c, "SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus'") == 0) {
            return 1;
        }
        return Math.max(
                1, queryLong(c, "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = to_regclass(?)", table));
    }

    static long queryLong(Connection c, String sql, Object... binds) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < binds.length; i++) {
                s.setObject(i + 1, binds[i]);
            }
            try (var rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * {@code function} summed over a table and its partitions (jobs is partitioned into
     * generations; a partitioned table holds no rows of its own), two binds: the table twice.
     */
    static String overPartitions(String function) {
        return "SELECT coalesce(sum(" + function + "(t.r)), 0)::bigint FROM (SELECT ?::regclass AS r UNION ALL "
                + "SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = ?::regclass) t";
    }
}
