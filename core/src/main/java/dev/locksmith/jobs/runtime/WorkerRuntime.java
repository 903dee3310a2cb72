package dev.locksmith.jobs.runtime;

import dev.locksmith.audit.HorizonReport;
import dev.locksmith.internal.Observing;
import dev.locksmith.internal.VirtualThreads;
import dev.locksmith.jobs.engine.LocalWakeups;
import dev.locksmith.jobs.engine.QueueEngine;
import dev.locksmith.observe.WorkerEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The one worker loop: the threads, each turning its {@link Mode} until the worker stops and
 * waiting between idle turns for a NOTIFY or the poll interval; the LISTEN connection; the
 * periodic tasks (heartbeats, rescue, the two-phase resolver) on one maintenance thread; the
 * table's vacuum and the watch on the MVCC horizon; start, with its pool-size check, and close, with its shutdown grace. The
 * leased, transactional and two-phase workers are this runtime with one of three modes.
 * <b>Internal: not API.</b>
 */
public final class WorkerRuntime {

    private final QueueEngine engine;
    private final DataSource dataSource;
    private final RuntimeSettings settings;
    private final Wakeup wakeup;
    private final Polling polling;
    private final QueueVacuum vacuum;
    private final HorizonWatch horizon;
    private final QueueNotifications notifications;
    /** This worker among the JVM's, for enqueues committed here; set by {@link #start}. */
    private volatile LocalWakeups.@Nullable Registration localWakeup;

    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicInteger liveLoops = new AtomicInteger();
    private final AtomicLong processed = new AtomicLong();
    private final List<Thread> loops = new ArrayList<>();
    private final List<ScheduledFuture<?>> stopWithWorker = new ArrayList<>();
    private volatile Mode mode = NOT_STARTED;
    private volatile ScheduledExecutorService maintenance;

    private static final Mode NOT_STARTED = new Mode() {
        @Override
        public String description() {
            return "worker";
        }

        @Override
        public int connectionsNeeded() {
            return 0;
        }

        @Override
        public int loops() {
            return 0;
        }

        @Override
        public String loopName(int index) {
            return "";
        }

        @Override
        public Turn turn(int loop) {
            return Turn.EMPTY;
        }
    };

    /**
     * A runtime for one worker, not yet started.
     *
     * @param engine the queue's statements
     * @param dataSource where the worker's own connections come from (LISTEN, two-phase steps)
     * @param settings the worker's validated settings
     */
    public WorkerRuntime(QueueEngine engine, DataSource dataSource, RuntimeSettings settings) {
        this.engine = engine;
        this.dataSource = dataSource;
        this.settings = settings;
        this.wakeup = new Wakeup(engine.observing(), settings.queue());
        this.vacuum = new QueueVacuum(engine.maintenance, settings.queue(), settings.vacuumInterval(), settings.log());
        this.horizon = new HorizonWatch(new HorizonReport(engine.dsl()), settings.horizonWarnAfter(), settings.log());
        this.polling = new Polling(settings.minPollInterval(), settings.pollInterval());
        this.notifications = new QueueNotifications(
                settings.listenSource() != null ? settings.listenSource() : dataSource,
                settings.queue(),
                settings.pollInterval(),
                () -> engine.observing().workerEvent(WorkerEvent.LISTENING, settings.queue()),
                () -> announced(Wakeup.Reason.NOTIFICATION));
        this.maintenance = Executors.newSingleThreadScheduledExecutor(r -> thread(r, "maintenance"));
    }

    QueueEngine engine() {
        return engine;
    }

    RuntimeSettings settings() {
        return settings;
    }

    DataSource dataSource() {
        return dataSource;
    }

    Logger log() {
        return settings.log();
    }

    Observing observing() {
        return engine.observing();
    }

    /** Whether the worker runs: false before {@link #start} and from {@link #close} on. */
    boolean running() {
        return running.get();
    }

    Wakeup wakeup() {
        return wakeup;
    }

    /**
     * The table's upkeep between jobs, each part when it is due: the vacuum check and the watch on
     * the MVCC horizon. Returns at once when neither is due.
     */
    void upkeep() {
        vacuum.runIfDue();
        horizon.runIfDue();
    }

    /** The watch on the MVCC horizon, for a mode that has no thread calling {@link #upkeep()}. */
    HorizonWatch horizon() {
        return horizon;
    }

    /**
     * A claim outside the loop threads (a handler thread claiming its next job) found jobs: the
     * adaptive poll stays at its shortest interval, as after a loop's claim that found some.
     */
    void foundJobs() {
        polling.after(Mode.Turn.FOUND, false);
    }

    /** Counts {@code jobs} settled by the worker ({@link #processed()}). */
    void processed(long jobs) {
        processed.addAndGet(jobs);
    }

    /** A daemon thread named {@code locksmith-<queue>-<name>}. */
    Thread thread(Runnable body, String name) {
        Thread t = new Thread(body, "locksmith-" + settings.queue() + "-" + name);
        t.setDaemon(true);
        return withHandler(t);
    }

    /** A thread for handlers: virtual when the worker runs them on virtual threads, else {@link #thread}. */
    Thread handlerThread(Runnable body, String name) {
        return settings.virtualThreads()
                ? withHandler(VirtualThreads.unstarted(body, "locksmith-" + settings.queue() + "-" + name))
                : thread(body, name);
    }

    /**
     * The handler threads a worker runs: {@code threads}, or with virtual threads no more than the
     * connections its pool leaves for handlers ({@code beside} being what it holds otherwise), so
     * that however many virtual threads are asked for, the handlers never wait for a connection.
     *
     * @param dataSource the worker's data source
     * @param threads the threads asked for
     * @param beside connections the worker holds beside one per handler
     * @param virtual whether handlers run on virtual threads
     * @param log where the bound is said, at INFO
     * @param queue named in the message
     * @return the handler threads to run
     * @throws IllegalStateException when the pool leaves no connection for a handler
     */
    public static int handlerThreads(
            DataSource dataSource, int threads, int beside, boolean virtual, Logger log, String queue) {
        if (!virtual) {
            return threads;
        }
        java.util.OptionalInt maximum = PoolSize.maximum(dataSource);
        if (maximum.isEmpty() || maximum.getAsInt() - beside >= threads) {
            return threads;
        }
        int room = maximum.getAsInt() - beside;
        if (room < 1) {
            throw new IllegalStateException("the data source allows at most " + maximum.getAsInt()
                    + " connections, and a worker of queue " + queue + " holds " + beside
                    + " beside its handlers' own: none is left for a handler; enlarge the pool");
        }
        log.info(
                "worker of queue {}: {} virtual threads asked for, {} handlers run at once: the pool's {} connections "
                        + "less the worker's {} others",
                queue,
                threads,
                room,
                maximum.getAsInt(),
                beside);
        return room;
    }

    /** {@code t} with an uncaught-exception handler that logs its death (virtual threads are daemons). */
    private Thread withHandler(Thread t) {
        t.setUncaughtExceptionHandler((thread, e) ->
                settings.log().error("worker thread {} of queue {} died", thread.getName(), settings.queue(), e));
        return t;
    }

    /**
     * Starts the worker in {@code mode}: checks the pool can give the connections it needs, runs
     * the mode's checks, then starts the loop threads, LISTEN and the periodic tasks.
     *
     * @param mode how the worker claims, runs and settles
     * @throws IllegalStateException when the pool is known to be too small, a check of the mode
     *     fails, or the worker was started before
     */
    // The periodic futures of tasks that go on until idle are not kept: they end with the executor.
    @SuppressWarnings("FutureReturnValueIgnored")
    public void start(Mode mode) {
        PoolSize.require(
                dataSource, mode.connectionsNeeded(), mode.description(), settings.threads(), settings.listensOnPool());
        mode.check();
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("worker " + settings.workerId() + " was already started");
        }
        this.mode = mode;
        // before `running`: close() proceeds only once it is set, and then finds the registration
        localWakeup = LocalWakeups.register(settings.queue(), () -> announced(Wakeup.Reason.IN_PROCESS));
        running.set(true);
        engine.maintenance.warnIfNotVacuumed(settings.log());
        mode.starting();
        for (int i = 0; i < mode.loops(); i++) {
            int index = i;
            Runnable body = () -> loop(index);
            loops.add(mode.loopsRunHandlers() ? handlerThread(body, mode.loopName(i)) : thread(body, mode.loopName(i)));
        }
        loops.forEach(Thread::start);
        if (settings.listen()) {
            notifications.start();
        }
        HistoryUpkeep history = new HistoryUpkeep(engine.maintenance, settings.queue(), settings.log());
        stopWithWorker.add(maintenance.scheduleWithFixedDelay(
                history, 0, HistoryUpkeep.INTERVAL.toMillis(), TimeUnit.MILLISECONDS));
        GenerationUpkeep generations = new GenerationUpkeep(engine.generations, settings.queue(), settings.log());
        stopWithWorker.add(maintenance.scheduleWithFixedDelay(
                generations,
                GenerationUpkeep.INTERVAL.toMillis(),
                GenerationUpkeep.INTERVAL.toMillis(),
                TimeUnit.MILLISECONDS));
        for (Mode.Periodic periodic : mode.periodic()) {
            ScheduledFuture<?> future = maintenance.scheduleWithFixedDelay(
                    periodic.task(),
                    periodic.initialDelay().toMillis(),
                    Math.max(1, periodic.interval().toMillis()),
                    TimeUnit.MILLISECONDS);
            if (!periodic.untilIdle()) {
                stopWithWorker.add(future);
            }
        }
    }

    /**
     * Jobs were announced (a notification, or an enqueue committed in this JVM): an idle handler
     * thread claims them when the mode has one ({@link Mode#claimOnIdleHandler}), else the loop
     * threads wake.
     */
    private void announced(Wakeup.Reason reason) {
        if (running.get() && mode.claimOnIdleHandler()) {
            wakeup.report(
                    reason == Wakeup.Reason.NOTIFICATION
                            ? WorkerEvent.WOKE_BY_NOTIFICATION
                            : WorkerEvent.WOKE_IN_PROCESS);
            return;
        }
        wakeup.wake(reason);
    }

    private void loop(int index) {
        liveLoops.incrementAndGet();
        try {
            boolean polled = false;
            while (running.get()) {
                // read before looking for work: a wake-up after this point ends the wait below
                long seen = wakeup.generation();
                Mode.Turn turn;
                try {
                    turn = mode.turn(index);
                } catch (RejectedExecutionException stopping) {
                    return;
                } catch (RuntimeException e) {
                    settings.log()
                            .warn(
                                    "claiming from queue {} failed, retrying after the poll interval",
                                    settings.queue(),
                                    e);
                    turn = Mode.Turn.EMPTY;
                }
                polling.after(turn, polled);
                polled = turn != Mode.Turn.MORE && running.get() && idle(seen);
            }
        } finally {
            liveLoops.decrementAndGet();
        }
    }

    /**
     * Waits after a turn that found nothing to do: for a wake-up or the poll interval while LISTEN
     * is up, else until the adaptive poll is due ({@link Polling}) and this thread takes it.
     *
     * @return whether the wait ended because this thread took the due adaptive poll
     */
    private boolean idle(long seen) {
        if (settings.listen() && notifications.listening()) {
            wakeup.report(wakeup.await(seen, settings.pollInterval(), running::get));
            return false;
        }
        while (running.get()) {
            WorkerEvent woke = wakeup.await(seen, polling.untilDue(), running::get);
            if (woke != WorkerEvent.WOKE_BY_POLL) {
                wakeup.report(woke);
                return false;
            }
            if (polling.take()) {
                wakeup.report(woke);
                return true;
            }
        }
        return false;
    }

    /**
     * Stops the worker: no more claims; work in hand gets {@code shutdownGrace} to finish, then
     * (except in two-phase mode) an interrupt and as long again; the mode then finishes or gives
     * back what it holds. Threads still running after that are logged at WARN by name and counted
     * by {@link #liveThreads()}; the mode keeps what they hold safe until they end.
     */
    public void close() {
        if (!running.compareAndSet(true, false)) {
            return;
        }
        LocalWakeups.Registration local = localWakeup;
        if (local != null) {
            local.close();
        }
        wakeup.wake(Wakeup.Reason.INTERNAL);
        List<String> stuck = new ArrayList<>(joinLoops(settings.shutdownGrace()));
        if (settings.listen()) {
            notifications.stop();
        }
        stopWithWorker.forEach(f -> f.cancel(false));
        stuck.addAll(mode.stop(settings.shutdownGrace(), this::stopMaintenance));
        if (!stuck.isEmpty()) {
            settings.log()
                    .warn(
                            "worker {} of queue {}: {} threads did not stop within the shutdown grace ({} and again "
                                    + "after an interrupt) and still run: {}; {}",
                            settings.workerId(),
                            settings.queue(),
                            stuck.size(),
                            settings.shutdownGrace(),
                            stuck,
                            mode.interruptsLoops()
                                    ? "what they hold stays theirs until they end (no other worker runs it meanwhile)"
                                    : "each finishes its job, or its prepared transaction is settled by a resolver");
        }
    }

    /** Joins the loop threads within the grace, interrupting them once; returns those still alive. */
    private List<String> joinLoops(Duration grace) {
        joinUntil(loops, System.nanoTime() + grace.toNanos());
        List<Thread> alive = loops.stream().filter(Thread::isAlive).toList();
        if (alive.isEmpty()) {
            return List.of();
        }
        if (!mode.interruptsLoops()) {
            return alive.stream().map(Thread::getName).toList();
        }
        alive.forEach(Thread::interrupt);
        joinUntil(alive, System.nanoTime() + grace.toNanos());
        return alive.stream().filter(Thread::isAlive).map(Thread::getName).toList();
    }

    private static void joinUntil(List<Thread> threads, long deadline) {
        for (Thread t : threads) {
            if (t.getState() == Thread.State.NEW) {
                continue;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Lets a periodic task in progress (a resolver round) finish within the grace, then stops them. */
    private void stopMaintenance() {
        maintenance.shutdown();
        try {
            if (!maintenance.awaitTermination(settings.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                maintenance.shutdownNow();
            }
        } catch (InterruptedException e) {
            maintenance.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Threads of the worker that run now: its loop threads and, in leased mode, the handler
     * threads running a job. After {@link #close()}, the threads it could not stop.
     *
     * @return the count
     */
    public int liveThreads() {
        return liveLoops.get() + mode.busyHandlers();
    }

    /** {@return jobs the worker settled so far: completed, or an attempt's end recorded} */
    public long processed() {
        return processed.get();
    }
}
