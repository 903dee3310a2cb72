package dev.locksmith.it;

import static dev.locksmith.codegen.Tables.ACCOUNTS;
import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.codegen.Tables.LOCK_WAIT_EVENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.locksmith.codegen.Locksmith;
import dev.locksmith.exception.CheckViolationException;
import dev.locksmith.internal.Errors;
import dev.locksmith.it.support.DatabaseTest;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.TableOptions;
import org.junit.jupiter.api.Test;

/** What DESIGN.md lists, read back from the catalog of a migrated database. */
class SchemaShapeTest extends DatabaseTest {

    private String columnType(String table, String column) {
        return dsl.fetchOne(
                        "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                                + "WHERE a.attrelid = ?::regclass AND a.attname = ?",
                        "locksmith." + table,
                        column)
                .get(0, String.class);
    }

    private Map<String, String> indexes(String table) {
        return dsl.fetch(
                        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'locksmith' AND tablename = ?",
                        table)
                .intoMap(r -> r.get(0, String.class), r -> r.get(1, String.class));
    }

    @Test
    void columnsHaveTheDesignedTypes() {
        assertThat(columnType("jobs", "id")).isEqualTo("bigint");
        assertThat(columnType("jobs", "payload")).isEqualTo("jsonb");
        assertThat(columnType("jobs", "run_at")).isEqualTo("timestamp with time zone");
        assertThat(columnType("jobs", "priority")).isEqualTo("smallint");
        assertThat(columnType("accounts", "balance")).isEqualTo("numeric(20,2)");
        assertThat(columnType("accounts", "version")).isEqualTo("bigint");
        assertThat(columnType("channel_account_leases", "locked_until")).isEqualTo("timestamp with time zone");
        assertThat(columnType("lock_wait_event", "waiter_txn_id")).isEqualTo("uuid");
        assertThat(columnType("lock_wait_event", "resource_id")).isEqualTo("character varying(256)");
        assertThat(columnType("deadlock_event", "txn_ids")).isEqualTo("jsonb");
        assertThat(dsl.fetchOne("SELECT column_default FROM information_schema.columns "
                                + "WHERE table_name = 'deadlock_event' AND column_name = 'detected_at'")
                        .get(0, String.class))
                .isEqualTo("now()");
    }

    @Test
    void waitMsIsAStoredGeneratedColumnThatComputes() {
        assertThat(dsl.fetchOne("SELECT is_generated || ':' || generation_expression FROM information_schema.columns "
                                + "WHERE table_name = 'lock_wait_event' AND column_name = 'wait_ms'")
                        .get(0, String.class))
                .startsWith("ALWAYS:");
        OffsetDateTime start = OffsetDateTime.parse("2026-01-01T10:00:00Z");
        Record row = dsl.insertInto(LOCK_WAIT_EVENT)
                .set(LOCK_WAIT_EVENT.WAITER_TXN_ID, UUID.randomUUID())
                .set(LOCK_WAIT_EVENT.RESOURCE_ID, "accounts:1")
                .set(LOCK_WAIT_EVENT.WAIT_START, start)
                .set(LOCK_WAIT_EVENT.WAIT_END, start.plusNanos(1_534_000_000L))
                .set(LOCK_WAIT_EVENT.OUTCOME, "timeout")
                .returning(LOCK_WAIT_EVENT.WAIT_MS)
                .fetchSingle();
        assertThat(row.get(LOCK_WAIT_EVENT.WAIT_MS)).isEqualTo(1534L);
    }

    @Test
    void partialIndexesCoverOnlyClaimableAndIdleRows() {
        Map<String, String> jobs = indexes("jobs");
        assertThat(jobs.get("jobs_claimable_idx"))
                .contains("(queue, priority, run_at, id)")
                .contains("WHERE ((status)::text = 'pending'::text)");
        // a look-up index: job_unique_keys keeps live keys unique across the partitions
        assertThat(jobs.get("jobs_unique_key_live_idx"))
                .startsWith("CREATE INDEX")
                .contains("WHERE");
        assertThat(indexes("job_unique_keys").get("job_unique_keys_pkey"))
                .startsWith("CREATE UNIQUE INDEX")
                .contains("(queue, unique_key)");
        assertThat(jobs.get("jobs_lease_expiry_idx")).contains("WHERE ((status)::text = 'running'::text)");
        assertThat(jobs.get("jobs_ordering_key_live_idx"))
                .contains("(queue, ordering_key, id)")
                .contains("ordering_key IS NOT NULL")
                .contains("'pending'", "'running'");
        Map<String, String> pool = indexes("channel_accounts");
        assertThat(pool).doesNotContainKey("channel_accounts_idle_idx");
        assertThat(indexes("channel_account_leases"))
                .doesNotContainKey("channel_account_leases_key_idx")
                .hasEntrySatisfying(
                        "channel_account_leases_key_fence_idx",
                        index -> assertThat(index).contains("(public_key, fence)"));
        assertThat(pool.get("channel_accounts_slot_idx")).startsWith("CREATE UNIQUE INDEX");
        Map<String, String> waits = indexes("lock_wait_event");
        assertThat(waits.get("lock_wait_event_resource_idx")).contains("(resource_id, wait_start)");
        assertThat(waits.get("lock_wait_event_holder_idx")).contains("(holder_txn_id)");
    }

    @Test
    void hotTablesHaveTheirStorageSettings() {
        for (int slot = 0; slot < 4; slot++) {
            assertThat(dsl.fetchOne(
                                    "SELECT reloptions::text FROM pg_class WHERE oid = to_regclass(?)",
                                    "locksmith.jobs_slot" + slot)
                            .get(0, String.class))
                    .as("jobs_slot" + slot)
                    .contains("fillfactor=70")
                    .contains("autovacuum_vacuum_scale_factor=0")
                    .contains("autovacuum_vacuum_cost_delay=0")
                    .contains("vacuum_truncate=false");
        }
        assertThat(dsl.fetchOne("SELECT reloptions::text FROM pg_class WHERE relname = 'channel_accounts'")
                        .get(0, String.class))
                .contains("autovacuum_vacuum_threshold=5000");
    }

    @Test
    void negativeBalanceIsRejectedByTheCheckConstraint() {
        long id = dsl.insertInto(ACCOUNTS)
                .set(ACCOUNTS.BALANCE, new BigDecimal("5.00"))
                .returning(ACCOUNTS.ID)
                .fetchSingle()
                .getId();

        assertThatThrownBy(() -> Errors.translating(() -> dsl.update(ACCOUNTS)
                        .set(ACCOUNTS.BALANCE, ACCOUNTS.BALANCE.minus(new BigDecimal("5.01")))
                        .where(ACCOUNTS.ID.eq(id))
                        .execute()))
                .isInstanceOfSatisfying(CheckViolationException.class, e -> {
                    assertThat(e.sqlState()).isEqualTo("23514");
                    assertThat(e.constraint()).isEqualTo("accounts_balance_non_negative");
                });
        assertThat(dsl.fetchValue(ACCOUNTS.BALANCE, ACCOUNTS.ID.eq(id))).isEqualByComparingTo("5.00");
    }

    @Test
    void generatedClassesMatchTheMigratedTables() {
        List<Table<?>> tables = Locksmith.LOCKSMITH.getTables().stream()
                .filter(table -> table.getOptions().type() != TableOptions.TableType.FUNCTION)
                .toList();
        // the one table-valued function: the first half of the keyed claim
        assertThat(Locksmith.LOCKSMITH.getTables())
                .filteredOn(table -> table.getOptions().type() == TableOptions.TableType.FUNCTION)
                .extracting(Table::getName)
                .containsExactly("job_claim_keyed");
        for (Table<?> table : tables) {
            int columns = dsl.fetchOne(
                            "SELECT count(*) FROM information_schema.columns "
                                    + "WHERE table_schema = 'locksmith' AND table_name = ?",
                            table.getName())
                    .get(0, Integer.class);
            assertThat(table.fields()).as(table.getName()).hasSize(columns);
        }
        assertThat(tables).extracting(Table::getName).containsExactlyInAnyOrderElementsOf(SchemaMigrationTest.TABLES);
        assertThat(JOBS.PAYLOAD.getDataType().getTypeName()).isEqualTo("jsonb");
    }
}
