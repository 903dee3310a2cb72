package dev.locksmith.it.docs;

import dev.locksmith.Locksmith;
import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import javax.sql.DataSource;
import org.jooq.DSLContext;

/**
 * What a statement block of the documentation may use without declaring it: the things a reader's
 * application already has, or that the page built a few blocks earlier. {@link SnippetCompiler}
 * compiles each such block as the body of a method of a subclass, so these fields are in scope,
 * and a block that declares a variable of the same name shadows them. The code is compiled, never
 * run: nothing here is ever initialised.
 *
 * <p>Keep this list short and obvious (CONTRIBUTING.md lists it too); a block that needs anything
 * else declares it, or says what it stands for in a comment.
 */
@SuppressWarnings({"unused", "NullAway"})
public abstract class SnippetScope {

    /** The application's data source (HikariCP in a service; PgJDBC's {@code PGSimpleDataSource} in a test). */
    protected DataSource dataSource;

    /** The application's jOOQ context on {@link #dataSource} ({@code DSL.using(dataSource, SQLDialect.POSTGRES)}). */
    protected DSLContext dsl;

    /** The environment ({@code Locksmith.of(dataSource)} or a builder), from "Getting started". */
    protected Locksmith locksmith;

    /** A job queue in {@link #locksmith}'s environment ({@code new JobQueue(locksmith)}). */
    protected JobQueue queue;

    /** A handler of one leased job at a time, for a {@code JobWorker}. */
    protected JobHandler handler;

    /** A handler of a batch of jobs in the claiming transaction, for a {@code TransactionalWorker}. */
    protected BatchJobHandler batchHandler;

    /** The application's Micrometer registry (Actuator's, in Spring Boot). */
    protected MeterRegistry meterRegistry;

    /** The application's OpenTelemetry ({@code GlobalOpenTelemetry.get()}, or the SDK it built). */
    protected OpenTelemetry openTelemetry;
}
