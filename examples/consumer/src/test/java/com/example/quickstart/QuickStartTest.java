package com.example.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.util.List;
import org.junit.jupiter.api.Test;

class QuickStartTest {

    @Test
    void runsTheQuickStartAgainstRealPostgres() throws Exception {
        // LOCKSMITH_JDBC_URL, else Testcontainers, else embedded PostgreSQL; dropped on close.
        try (PostgresServer server = PostgresServer.start();
                ScratchDatabases databases = server.scratch("consumer")) {
            ScratchDatabase database = databases.create("quickstart");

            QuickStart.Outcome outcome = QuickStart.run(database.dataSource());

            assertEquals(List.of("{\"order\": 42}"), outcome.handled(), "the committed order's job ran once");
            assertTrue(outcome.jobGone(), "a completed job's row is deleted");
            assertEquals(1, outcome.orders(), "the rolled-back order is gone");
            assertEquals(0, outcome.jobsOfTheRolledBackOrder(), "and so is its job");
        }
    }
}
