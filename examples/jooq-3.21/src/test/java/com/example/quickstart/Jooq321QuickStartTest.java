package com.example.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.locksmith.provisioning.PostgresServer;
import dev.locksmith.provisioning.ScratchDatabase;
import dev.locksmith.provisioning.ScratchDatabases;
import java.util.List;
import org.jooq.Constants;
import org.junit.jupiter.api.Test;

class Jooq321QuickStartTest {

    @Test
    void theQuickStartRunsOnTheJooq321Runtime() throws Exception {
        // The runtime is the application's jOOQ, not the 3.19 locksmith was built with. Read
        // reflectively: the constant itself would be the compiler's copy.
        Object jooq = Constants.class.getField("FULL_VERSION").get(null);
        assertTrue(jooq.toString().startsWith("3.21."), "jOOQ on the class path: " + jooq);
        assertTrue(Runtime.version().feature() >= 21, "Java " + Runtime.version());

        try (PostgresServer server = PostgresServer.start();
                ScratchDatabases databases = server.scratch("jooq321")) {
            ScratchDatabase database = databases.create("quickstart");

            QuickStart.Outcome outcome = QuickStart.run(database.dataSource());

            assertEquals(List.of("{\"order\": 42}"), outcome.handled(), "the committed order's job ran once");
            assertTrue(outcome.jobGone(), "a completed job's row is deleted");
            assertEquals(1, outcome.orders(), "the rolled-back order is gone");
            assertEquals(0, outcome.jobsOfTheRolledBackOrder(), "and so is its job");
        }
    }
}
