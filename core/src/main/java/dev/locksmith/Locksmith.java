package dev.locksmith;

import dev.locksmith.internal.Environment;
import dev.locksmith.internal.SchemaMapping;
import dev.locksmith.observe.LocksmithObserver;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * The one environment every repository and worker of an application shares: where locksmith's
 * tables live, how the application's connections reach PostgreSQL, how the hot statements
 * execute, and who observes them. Build it once, from a {@code DataSource} or from your
 * {@code DSLContext}, and build the repositories from it; workers come from a {@code JobQueue}
 * and take its environment. Immutable and thread-safe.
 *
 * <pre>{@code
 * Locksmith locksmith = Locksmith.builder(dataSource)
 *         .schema("billing")                           // where LocksmithSchema.migrate put the tables
 *         .poolingMode(PoolingMode.TRANSACTION)        // behind PgBouncer in transaction mode
 *         .observer(metrics, tracing)                  // locksmith-micrometer, locksmith-opentelemetry
 *         .build();
 * JobQueue jobs = new JobQueue(locksmith);
 * Accounts accounts = new Accounts(locksmith);
 * JobWorker worker = JobWorker.builder(jobs, "emails", handler).listen(false).build().start();
 * }</pre>
 *
 * <p>Each setting has one source: this environment. A repository built from a plain
 * {@code DSLContext} (for example {@code new JobQueue(dsl)}) uses the defaults, as
 * {@code Locksmith.of(dsl)} would; one built from {@link #dsl()} uses this environment. Calls that
 * change data still take your transaction's {@code DSLContext} first: the repository applies this
 * environment's schema to it, whatever context it is.
 */
public final class Locksmith {

    /** The schema of the generated tables, and the default of the changelog and of the environment. */
    public static final String DEFAULT_SCHEMA = SchemaMapping.DEFAULT;

    private final DSLContext dsl;
    private final Environment environment;

    private Locksmith(DSLContext dsl, Environment environment) {
        this.dsl = dsl;
        this.environment = environment;
    }

    /**
     * The environment with every default, its connections from {@code dataSource}.
     *
     * @param dataSource where connections come from
     * @return the environment
     */
    public static Locksmith of(DataSource dataSource) {
        return builder(dataSource).build();
    }

    /**
     * The environment with every default, running on {@code dsl}: its connection provider,
     * transaction provider (Spring's, for instance), listeners and settings apply to locksmith's
     * statements. A context made by {@link #dsl()} keeps that environment.
     *
     * @param dsl your context
     * @return the environment
     */
    public static Locksmith of(DSLContext dsl) {
        return builder(dsl).build();
    }

    /**
     * A builder for an environment whose connections come from {@code dataSource}.
     *
     * @param dataSource where connections come from
     * @return a builder with the defaults: schema {@value #DEFAULT_SCHEMA},
     *     {@link PoolingMode#SESSION}, {@link ExecutionMode#JOOQ}, no observer
     */
    public static Builder builder(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return new Builder(DSL.using(dataSource, SQLDialect.POSTGRES));
    }

    /**
     * A builder for an environment running on {@code dsl} (see {@link #of(DSLContext)}). Workers
     * and session advisory locks hold connections of their own, which come from the data source
     * behind the context's connection provider ({@code DataSourceConnectionProvider}, as
     * {@code DSL.using(dataSource, ...)} and Spring Boot make); with another provider, they refuse
     * to start.
     *
     * @param dsl your context; a context made by {@link #dsl()} starts from that environment's
     *     settings
     * @return a builder
     */
    public static Builder builder(DSLContext dsl) {
        Objects.requireNonNull(dsl, "dsl");
        return new Builder(dsl);
    }

    /**
     * The context locksmith runs its statements with: yours (or one over your data source), with
     * locksmith's tables rendered in {@link #schema()} and this environment attached. Use it for
     * your own statements on locksmith's tables, and to build repositories that share this
     * environment.
     *
     * @return the context
     */
    public DSLContext dsl() {
        return dsl;
    }

    /** {@return the schema locksmith's tables were migrated to} */
    public String schema() {
        return environment.schema();
    }

    /** {@return how the connections reach the server} */
    public PoolingMode poolingMode() {
        return environment.poolingMode();
    }

    /** {@return how the repositories execute their hot statements} */
    public ExecutionMode executionMode() {
        return environment.executionMode();
    }

    /** {@return the observer told of what repositories and workers do; {@link LocksmithObserver#NONE} if none} */
    public LocksmithObserver observer() {
        return environment.observer();
    }

    /**
     * The data source workers and session locks take their own connections from.
     *
     * @return the data source, or empty when the environment runs on a context whose connections
     *     do not come from one
     */
    public Optional<DataSource> dataSource() {
        return Optional.ofNullable(environment.dataSource());
    }

    @Override
    public String toString() {
        return "Locksmith[schema=" + schema() + ", poolingMode=" + poolingMode() + ", executionMode=" + executionMode()
                + ", observer=" + observer() + "]";
    }

    /** Builds a {@link Locksmith}; each setting is validated when set, naming it. */
    public static final class Builder {
        private final DSLContext dsl;
        private final @Nullable String mappedByContext;
        private String schema;
        private PoolingMode poolingMode;
        private ExecutionMode executionMode;
        private LocksmithObserver observer;
        private List<CommitHook> commitHooks;

        private Builder(DSLContext dsl) {
            this.dsl = dsl;
            Environment start = Environment.of(dsl);
            String mapped = SchemaMapping.mappedSchema(dsl.settings());
            this.mappedByContext = mapped.equals(start.schema()) ? null : mapped;
            this.schema = start.schema();
            this.poolingMode = start.poolingMode();
            this.executionMode = start.executionMode();
            this.observer = start.observer();
            this.commitHooks = start.commitHooks();
        }

        /**
         * The schema locksmith's tables were migrated to ({@code LocksmithSchema.migrate(dataSource,
         * schema, modules)}, or the changelog parameter {@code locksmith.schema}); default
         * {@value Locksmith#DEFAULT_SCHEMA}.
         *
         * @param schema a lower-case unquoted identifier of at most 63 bytes
         * @return this builder
         * @throws IllegalArgumentException for an invalid name
         */
        public Builder schema(String schema) {
            this.schema = SchemaMapping.requireName(schema);
            return this;
        }

        /**
         * How the connections reach the server; default {@link PoolingMode#SESSION}. With
         * {@link PoolingMode#TRANSACTION} (PgBouncer in transaction mode), what needs one server
         * session per connection refuses: session advisory locks, and workers' LISTEN wake-up.
         *
         * @param poolingMode the mode
         * @return this builder
         */
        public Builder poolingMode(PoolingMode poolingMode) {
            this.poolingMode = Objects.requireNonNull(poolingMode, "poolingMode");
            return this;
        }

        /**
         * How repositories execute their hot statements; default {@link ExecutionMode#JOOQ}.
         *
         * @param executionMode the mode
         * @return this builder
         */
        public Builder executionMode(ExecutionMode executionMode) {
            this.executionMode = Objects.requireNonNull(executionMode, "executionMode");
            return this;
        }

        /**
         * Who is told what repositories and workers do; default none. Several are told in order
         * ({@link LocksmithObserver#all}); this replaces what an earlier call set.
         *
         * @param observers the observers
         * @return this builder
         */
        public Builder observer(LocksmithObserver... observers) {
            Objects.requireNonNull(observers, "observers");
            for (LocksmithObserver o : observers) {
                Objects.requireNonNull(o, "observers must not contain null");
            }
            this.observer = observers.length == 0 ? LocksmithObserver.NONE : LocksmithObserver.all(observers);
            return this;
        }

        /**
         * What else tells locksmith when a transaction it does not start commits; none by default.
         * locksmith sees auto-committed statements and jOOQ transactions started on
         * {@link Locksmith#dsl()} by itself; the Spring Boot starter adds one for Spring-managed
         * transactions. The queue uses them to wake workers after an enqueue commits; where no
         * hook sees a transaction, an enqueue sends its {@code NOTIFY} inside it
         * ({@code JobQueueConfig.Builder#wakeUp}). This replaces what an earlier call set.
         *
         * @param hooks the hooks, asked in order
         * @return this builder
         */
        public Builder commitHook(CommitHook... hooks) {
            Objects.requireNonNull(hooks, "hooks");
            for (CommitHook hook : hooks) {
                Objects.requireNonNull(hook, "hooks must not contain null");
            }
            this.commitHooks = List.of(hooks);
            return this;
        }

        /**
         * The environment.
         *
         * @return the environment
         * @throws IllegalArgumentException when the context's own jOOQ settings already render
         *     locksmith's tables in another schema than the one set here (two sources for one
         *     setting: remove the context's mapping, or set the same schema here)
         */
        public Locksmith build() {
            if (mappedByContext != null && !mappedByContext.equals(schema)) {
                throw new IllegalArgumentException(
                        "the DSLContext's jOOQ settings render locksmith's tables in schema '"
                                + mappedByContext + "', but the environment's schema is '" + schema + "': set schema(\""
                                + mappedByContext + "\") or remove the context's render mapping of '" + DEFAULT_SCHEMA
                                + "'");
            }
            Environment environment = new Environment(
                    schema, poolingMode, executionMode, observer, Environment.dataSourceOf(dsl), commitHooks);
            return new Locksmith(environment.apply(dsl), environment);
        }
    }
}
