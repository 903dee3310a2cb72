package com.example.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;

class QuickStartTest {

    @Test
    void runsTheQuickStartAgainstRealPostgres() {
        // LOCKSMITH_JDBC_URL, else Testcontainers, else embedded PostgreSQL; dropped on close.
        try (PostgresServer server = PostgresServer.start();
                ScratchDatabases databases = server.scratch("consumer")) {
            ScratchDatabase database = databases.create("quickstart");

            QuickStart.Outcome outcome = QuickStart.run(database.dataSource());

            assertEquals(List.of(outcome.jobId()), outcome.claimed());
            assertTrue(outcome.completed());
            assertTrue(outcome.transferred());
            assertEquals(new BigDecimal("75.00"), outcome.fromBalance());
            assertEquals(new BigDecimal("25.00"), outcome.toBalance());
        }
    }
}
