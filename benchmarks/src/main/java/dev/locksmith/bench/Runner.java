package dev.locksmith.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs cases: each variant of each case ({@link BenchOptions#runsVariant}) is run {@code runs}
 * times, the variants taking turns at going first, after a warm-up, for a fixed duration (or until
 * the work runs out). Self-timed variants that do a fixed amount of work in this JVM (a drain) are
 * warmed up by discarded runs before the case's first run, when the options ask for it
 * ({@link BenchOptions#warmUpByRepeating}).
 */
public final class Runner {

    private final BenchOptions options;
    private final Consumer<String> progress;
    private final BeforeRun beforeEachRun;
    /** Milliseconds this JVM has spent compiling so far ({@link #compilationMillis()}). */
    private final LongSupplier compiled;
    /** The time in nanoseconds that the warm-up spends ({@code System::nanoTime}). */
    private final LongSupplier clock;

    /**
     * How much longer than its duration a run goes on when no operation has finished in it yet:
     * a run measures work, so on a machine too loaded to finish one operation within the
     * duration it waits for the first one rather than report a rate of zero.
     */
    static final long PATIENCE_NANOS = TimeUnit.MINUTES.toNanos(1);

    /**
     * A warm-up run that compiled for more than this fraction of its duration leaves the JIT
     * compiler busy enough to take CPU from the server in the runs measured after it.
     */
    static final double QUIET_COMPILATION = 0.05;

    /** A runner reporting each step to {@code progress}. */
    public Runner(BenchOptions options, Consumer<String> progress) {
        this(options, progress, (c, variant) -> {});
    }

    /** What runs before each run of a variant, after its {@code prepare()}. */
    @FunctionalInterface
    public interface BeforeRun {
        /**
         * Readies what the run of {@code variant} in case {@code c} needs.
         *
         * @param c the case
         * @param variant the variant about to run
         * @throws Exception when that fails (the bench stops)
         */
        void before(Workload.Case c, Workload.Variant variant) throws Exception;
    }

    /**
     * A runner that also calls {@code beforeEachRun} before each variant's run (measured or
     * warm-up), after its {@code prepare()}: {@link BenchSession#readyFor}, so that no variant
     * inherits another's server-side prepared statements and cached plans, and a variant in this
     * JVM finds its connections open.
     */
    public Runner(BenchOptions options, Consumer<String> progress, BeforeRun beforeEachRun) {
        this(options, progress, beforeEachRun, compilationMillis(), System::nanoTime);
    }

    /**
     * For tests: {@code compiled} stands for the JIT compiler's time so far, in milliseconds, and
     * {@code clock} for the time the warm-up spends, in nanoseconds.
     */
    Runner(
            BenchOptions options,
            Consumer<String> progress,
            BeforeRun beforeEachRun,
            LongSupplier compiled,
            LongSupplier clock) {
        this.options = options;
        this.progress = progress;
        this.beforeEachRun = beforeEachRun;
        this.compiled = compiled;
        this.clock = clock;
    }

    /**
     * The JIT compilers' accumulated time in milliseconds, summed over their threads; zero
     * throughout where the JVM does not report it (the warm-up then runs its minimum).
     */
    private static LongSupplier compilationMillis() {
        CompilationMXBean compilation = ManagementFactory.getCompilationMXBean();
        if (compilation == null || !compilation.isCompilationTimeMonitoringSupported()) {
            return () -> 0;
        }
        return compilation::getTotalCompilationTime;
    }

    /** Progress steps that running {@code workloads} will report: one per variant per run. */
    public int steps(Iterable<Workload> workloads) {
        int steps = 0;
        for (Workload w : workloads) {
            for (Workload.Case c : w.cases(options)) {
                if (!options.selects(c.config())) {
                    continue;
                }
                steps += options.runs() * variants(c, options).size();
            }
        }
        return steps;
    }

    /** Runs every case of {@code workload}. */
    public List<Result> run(Workload workload) throws Exception {
        List<Result> results = new ArrayList<>();
        for (Workload.Case c : workload.cases(options)) {
            if (options.selects(c.config())) {
                results.addAll(runCase(workload.name(), c));
            }
        }
        return results;
    }

    /** The variants of {@code c} that {@code options} run, by result name ({@link Result#LIBRARY}, ...). */
    static Map<String, Workload.Variant> variants(Workload.Case c, BenchOptions options) {
        Map<String, Workload.Variant> variants = new java.util.LinkedHashMap<>();
        variants.put(Result.LIBRARY, c.library());
        if (c.libraryListened() != null) {
            variants.put(Result.LIBRARY_LISTENED, c.libraryListened());
        }
        if (c.libraryJdbc() != null) {
            variants.put(Result.LIBRARY_JDBC, c.libraryJdbc());
        }
        if (c.raw() != null) {
            variants.put(Result.RAW, c.raw());
        }
        if (c.pgbench() != null) {
            variants.put(Result.PGBENCH, c.pgbench());
        }
        if (c.plain() != null) {
            variants.put(Result.PGBENCH_PLAIN, c.plain());
        }
        variants.keySet().removeIf(name -> !options.runsVariant(name));
        return variants;
    }

    private List<Result> runCase(String workload, Workload.Case c) throws Exception {
        Map<String, Workload.Variant> variants = variants(c, options);
        Map<String, List<Double>> throughput = new HashMap<>();
        Map<String, List<Latencies>> latencies = new HashMap<>();
        Map<String, Long> violations = new HashMap<>();
        Map<String, Map<String, List<Double>>> extras = new HashMap<>();
        warmUp(c, variants.values());
        for (int run = 1; run <= options.runs(); run++) {
            List<String> order = new ArrayList<>(variants.keySet());
            java.util.Collections.rotate(order, -(run - 1));
            for (String name : order) {
                progress.accept(String.format(
                        "%s %s workers=%d %s run %d/%d", workload, c.config(), c.workers(), name, run, options.runs()));
                Workload.Variant variant = variants.get(name);
                variant.prepare();
                beforeEachRun.before(c, variant);
                List<Latencies> lat = new CopyOnWriteArrayList<>();
                double[] clientCpu = {Double.NaN};
                double rate = variant instanceof Workload.SelfTimed self
                        ? measureSelfTimed(self, clientCpu)
                        : measure(c, variant, lat, clientCpu);
                throughput.computeIfAbsent(name, k -> new ArrayList<>()).add(rate);
                if (!Double.isNaN(clientCpu[0])) {
                    extras.computeIfAbsent(name, n -> new HashMap<>())
                            .computeIfAbsent(Result.CLIENT_CPU, n -> new ArrayList<>())
                            .add(clientCpu[0]);
                }
                latencies.computeIfAbsent(name, k -> new ArrayList<>()).addAll(lat);
                violations.merge(name, variant.verify(), Long::sum);
                variant.extras()
                        .forEach((k, v) -> extras.computeIfAbsent(name, n -> new HashMap<>())
                                .computeIfAbsent(k, n -> new ArrayList<>())
                                .add(v));
            }
        }
        List<Result> results = new ArrayList<>();
        for (String name : variants.keySet()) {
            Optional<Double> p50 = Optional.empty();
            Optional<Double> p99 = Optional.empty();
            long[] all = Latencies.mergeSorted(latencies.get(name));
            if (all.length > 0) {
                p50 = Optional.of(Stats.percentile(all, 50) / 1e6);
                p99 = Optional.of(Stats.percentile(all, 99) / 1e6);
            }
            Map<String, Double> medians = new HashMap<>();
            extras.getOrDefault(name, Map.of()).forEach((k, v) -> medians.put(k, Stats.median(v)));
            results.add(new Result(
                    workload,
                    c.config(),
                    c.workers(),
                    name,
                    c.unit(),
                    throughput.get(name),
                    p50,
                    p99,
                    violations.getOrDefault(name, 0L),
                    medians));
        }
        return results;
    }

    /**
     * Readies the JIT compiler for the self-timed variants that ask for it
     * ({@link Workload.SelfTimed#warmsUpByRepeating}). Such a run has no warm-up of its own: it
     * is one fixed amount of work (a drain), and the statements of one drain are too few for the
     * compiler to finish with the code that sends them, so the case run first would measure a
     * JVM that still interprets much of its hot path (the
     * transactional worker's drain at batch 100 ran at 77,000 jobs/s in its first run, 99,000
     * in its second and 113,000-125,000 from its third, the JVM's CPU time per job falling with
     * it; a first case warmed up by 1 s of such runs still ran at 0.61x pgbench, by three runs
     * at 0.75x, by 3 s at 0.88x). Each such variant runs, discarded, until it has spent three
     * times the warm-up time, and then on while its last run kept the JIT compiler busy for more
     * than {@value #QUIET_COMPILATION} of its duration, up to thirty times the warm-up time: on
     * a machine whose server shares the cores, a compiler still at work in the measured runs
     * takes the server's CPU (the tuned JobWorker's drain compiled for 10-30% of each measured
     * run after 3 s of warm-up, and for 60-200 ms of each 800 ms run until about 15 s). Variants
     * run by another process (pgbench) have nothing to warm up. Not when the options do not ask
     * for it (the demo): then every run takes its fixed time.
     */
    private void warmUp(Workload.Case c, Iterable<Workload.Variant> variants) throws Exception {
        if (options.warmup().isZero() || !options.warmUpByRepeating()) {
            return;
        }
        long least = 3 * options.warmup().toNanos();
        long most = 30 * options.warmup().toNanos();
        for (Workload.Variant variant : variants) {
            if (variant instanceof Workload.SelfTimed self && self.warmsUpByRepeating()) {
                long spent = 0;
                boolean quiet;
                do {
                    self.prepare();
                    beforeEachRun.before(c, self);
                    long compiledBefore = compiled.getAsLong();
                    long start = clock.getAsLong();
                    self.measure();
                    long took = clock.getAsLong() - start;
                    spent += took;
                    long compiling = TimeUnit.MILLISECONDS.toNanos(compiled.getAsLong() - compiledBefore);
                    quiet = compiling <= QUIET_COMPILATION * took;
                } while (spent < least || (!quiet && spent < most));
            }
        }
    }

    /**
     * Runs a self-timed variant; {@code clientCpu[0]} receives the whole JVM's CPU time per unit
     * in microseconds (its threads are the variant's, and the JVM's own, such as the JIT
     * compiler and the collector), when the variant knows its units.
     */
    private static double measureSelfTimed(Workload.SelfTimed variant, double[] clientCpu) throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuStart = os.getProcessCpuTime();
        double rate = variant.measure();
        long units = variant.units();
        if (units > 0 && cpuStart >= 0) {
            clientCpu[0] = (os.getProcessCpuTime() - cpuStart) / 1e3 / units;
        }
        return rate;
    }

    /**
     * Runs {@code variant} for the duration and returns its units per second; {@code clientCpu[0]}
     * receives the worker threads' CPU time per unit, in microseconds (each thread counts from
     * its first operation that starts while measuring). A run in which no operation has finished
     * when the duration is over goes on until one does, for up to {@link #PATIENCE_NANOS} more.
     */
    private double measure(Workload.Case c, Workload.Variant variant, List<Latencies> latencies, double[] clientCpu)
            throws Exception {
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        AtomicLong cpuNanos = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong units = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicInteger active = new AtomicInteger(c.workers());
        AtomicLong lastExhausted = new AtomicLong();
        CountDownLatch allDone = new CountDownLatch(c.workers());
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < c.workers(); w++) {
            Workload.Op op = variant.op(w);
            Latencies mine = new Latencies();
            latencies.add(mine);
            Thread t = new Thread(
                    () -> {
                        long cpuStart = -1;
                        try {
                            while (!stop.get()) {
                                if (cpuStart < 0 && measuring.get()) {
                                    cpuStart = cpu.getCurrentThreadCpuTime();
                                }
                                long start = System.nanoTime();
                                int done;
                                try {
                                    done = op.run();
                                } catch (Exception e) {
                                    errors.incrementAndGet();
                                    continue;
                                }
                                if (measuring.get()) {
                                    units.addAndGet(done);
                                    if (variant.timed() && done > 0) {
                                        mine.record(System.nanoTime() - start);
                                    }
                                }
                                if (done == 0 && variant.stopsWhenEmpty()) {
                                    break;
                                }
                            }
                        } finally {
                            if (cpuStart >= 0) {
                                cpuNanos.addAndGet(cpu.getCurrentThreadCpuTime() - cpuStart);
                            }
                            if (active.decrementAndGet() == 0) {
                                lastExhausted.set(System.nanoTime());
                            }
                            allDone.countDown();
                        }
                    },
                    "bench-" + w);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        if (!options.warmup().isZero() && !variant.untilExhausted()) {
            allDone.await(options.warmup().toNanos(), TimeUnit.NANOSECONDS);
        }
        long begin = System.nanoTime();
        measuring.set(true);
        long limit = variant.untilExhausted()
                ? TimeUnit.MINUTES.toNanos(10)
                : options.duration().toNanos();
        boolean finishedEarly = allDone.await(limit, TimeUnit.NANOSECONDS);
        long patience = System.nanoTime() + PATIENCE_NANOS;
        while (!finishedEarly && units.get() == 0 && System.nanoTime() < patience) {
            finishedEarly = allDone.await(10, TimeUnit.MILLISECONDS);
        }
        stop.set(true);
        long end = finishedEarly ? lastExhausted.get() : System.nanoTime();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        if (errors.get() > 0) {
            progress.accept("  " + errors.get() + " operations failed");
        }
        if (end <= begin) {
            progress.accept("  the work ran out during warm-up; give it more work or a shorter warm-up");
            return 0;
        }
        if (units.get() > 0) {
            clientCpu[0] = cpuNanos.get() / 1e3 / units.get();
        }
        return units.get() / ((end - begin) / 1e9);
    }
}
