package dev.locksmith.jobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * One sender per data source object, whatever the data source's own equals and hashCode say; its
 * statements at least {@link WakeSignals#MIN_INTERVAL_NANOS} apart, no signal lost; and this
 * JVM's workers woken in-process.
 */
class WakeSignalsTest {

    /** A data source every method of which fails, equals and hashCode included. */
    private static DataSource refusing() {
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** One statement the sender ran: when, and the queues it named. */
    private record Sent(long nanos, List<String> queues) {}

    /** A data source whose connections record each statement instead of sending it. */
    private static DataSource recording(List<Sent> sent) {
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (ds, dsMethod, dsArgs) -> {
                    if (!dsMethod.getName().equals("getConnection")) {
                        throw new UnsupportedOperationException(dsMethod.getName());
                    }
                    List<String> queues = new ArrayList<>();
                    PreparedStatement statement = (PreparedStatement) Proxy.newProxyInstance(
                            DataSource.class.getClassLoader(),
                            new Class<?>[] {PreparedStatement.class},
                            (st, method, args) -> switch (method.getName()) {
                                case "setArray" -> {
                                    for (Object q : (Object[]) ((Array) args[1]).getArray()) {
                                        queues.add((String) q);
                                    }
                                    yield null;
                                }
                                case "execute" -> {
                                    synchronized (sent) {
                                        sent.add(new Sent(System.nanoTime(), List.copyOf(queues)));
                                        sent.notifyAll();
                                    }
                                    yield true;
                                }
                                case "close" -> null;
                                default -> throw new UnsupportedOperationException(method.getName());
                            });
                    return Proxy.newProxyInstance(
                            DataSource.class.getClassLoader(),
                            new Class<?>[] {Connection.class},
                            (c, method, args) -> switch (method.getName()) {
                                case "getAutoCommit" -> true;
                                case "prepareStatement" -> statement;
                                case "createArrayOf" -> array((Object[]) args[1]);
                                case "close" -> null;
                                default -> throw new UnsupportedOperationException(method.getName());
                            });
                });
    }

    private static Array array(Object[] values) {
        return (Array) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {Array.class}, (a, method, args) -> {
                    if (method.getName().equals("getArray")) {
                        return values.clone();
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void queuesOnOneDataSourceShareItsSignalsAndOthersDoNotThoughTheirEqualsFails() {
        DataSource one = refusing();
        DataSource other = refusing();
        WakeSignals first = WakeSignals.of(one);
        assertThat(WakeSignals.of(one)).isSameAs(first);
        assertThat(WakeSignals.of(other)).isNotSameAs(first);
    }

    /**
     * Four producers signalling as fast as they can: the statements go at least the interval
     * apart (a NOTIFY per signal, less than a millisecond apart, would hold a PgJDBC listener's
     * notifications back), far fewer than the signals, and the last signal of each queue is sent.
     */
    @Test
    void statementsGoAtLeastTheIntervalApartAndNoSignalIsLost() throws Exception {
        List<Sent> sent = new ArrayList<>();
        DataSource dataSource = recording(sent);
        WakeSignals signals = WakeSignals.of(dataSource);
        AtomicInteger signalled = new AtomicInteger();
        long[] lastSignal = new long[4];
        List<Thread> producers = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        for (int p = 0; p < 4; p++) {
            int index = p;
            Thread t = new Thread(() -> {
                String queue = "q" + index;
                while (System.nanoTime() < end) {
                    lastSignal[index] = System.nanoTime();
                    signals.signal(Set.of(queue));
                    signalled.incrementAndGet();
                }
            });
            producers.add(t);
            t.start();
        }
        for (Thread t : producers) {
            t.join();
        }
        // the sender finishes within a few intervals; wait generously for it on a loaded machine
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        synchronized (sent) {
            for (long left = deadline - System.nanoTime();
                    !allSentAfter(sent, lastSignal) && left > 0;
                    left = deadline - System.nanoTime()) {
                TimeUnit.NANOSECONDS.timedWait(sent, left);
            }
        }

        assertThat(allSentAfter(sent, lastSignal))
                .as("each queue named by a statement after its last signal")
                .isTrue();
        synchronized (sent) {
            assertThat(sent.size()).isLessThan(signalled.get() / 10);
            for (int i = 1; i < sent.size(); i++) {
                assertThat(sent.get(i).nanos() - sent.get(i - 1).nanos())
                        .as("statement %d after %d", i, i - 1)
                        .isGreaterThanOrEqualTo(WakeSignals.MIN_INTERVAL_NANOS);
            }
        }
    }

    private static boolean allSentAfter(List<Sent> sent, long[] lastSignal) {
        synchronized (sent) {
            for (int p = 0; p < lastSignal.length; p++) {
                String queue = "q" + p;
                long after = lastSignal[p];
                if (sent.stream()
                        .noneMatch(s -> s.nanos() >= after && s.queues().contains(queue))) {
                    return false;
                }
            }
            return true;
        }
    }

    @Test
    void aSignalWakesThisJvmsWorkersOfItsQueuesUntilTheyStop() {
        AtomicInteger first = new AtomicInteger();
        AtomicInteger second = new AtomicInteger();
        AtomicInteger other = new AtomicInteger();
        WakeSignals signals = WakeSignals.of(recording(new ArrayList<>()));
        try (LocalWakeups.Registration a = LocalWakeups.register("local-a", first::incrementAndGet);
                LocalWakeups.Registration b = LocalWakeups.register("local-a", second::incrementAndGet);
                LocalWakeups.Registration c = LocalWakeups.register("local-other", other::incrementAndGet)) {
            signals.signal(Set.of("local-a"));
            assertThat(first).hasValue(1);
            assertThat(second).hasValue(1);
            assertThat(other).hasValue(0);
            a.close();
            signals.signal(Set.of("local-a", "local-other"));
            assertThat(first).hasValue(1);
            assertThat(second).hasValue(2);
            assertThat(other).hasValue(1);
        }
        signals.signal(Set.of("local-a", "local-other"));
        assertThat(second).hasValue(2);
        assertThat(other).hasValue(1);
    }
}
