package dev.locksmith.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Virtual threads (Java 21+) from a library compiled for Java 17: {@code Thread.ofVirtual()} and
 * its builder, looked up once by reflection. <b>Internal: not API.</b>
 */
public final class VirtualThreads {

    /** {@code Thread.ofVirtual()}, or null before Java 21. */
    private static final @Nullable MethodHandle OF_VIRTUAL;
    /** {@code Thread.Builder.name(String)}. */
    private static final @Nullable MethodHandle NAME;
    /** {@code Thread.Builder.unstarted(Runnable)}. */
    private static final @Nullable MethodHandle UNSTARTED;

    static {
        MethodHandle ofVirtual = null;
        MethodHandle name = null;
        MethodHandle unstarted = null;
        try {
            Class<?> builder = Class.forName("java.lang.Thread$Builder");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            ofVirtual = lookup.findStatic(
                    Thread.class,
                    "ofVirtual",
                    MethodType.methodType(Class.forName("java.lang.Thread$Builder$OfVirtual")));
            name = lookup.findVirtual(builder, "name", MethodType.methodType(builder, String.class));
            unstarted = lookup.findVirtual(builder, "unstarted", MethodType.methodType(Thread.class, Runnable.class));
        } catch (ReflectiveOperationException | RuntimeException beforeJava21) {
            ofVirtual = null;
        }
        OF_VIRTUAL = ofVirtual;
        NAME = name;
        UNSTARTED = unstarted;
    }

    private VirtualThreads() {}

    /** {@return whether this JVM has virtual threads (Java 21 or later)} */
    public static boolean available() {
        return OF_VIRTUAL != null;
    }

    /**
     * Fails unless this JVM has virtual threads.
     *
     * @param what named in the message
     * @throws IllegalStateException before Java 21
     */
    public static void require(String what) {
        if (!available()) {
            throw new IllegalStateException(what + " needs virtual threads, which came in Java 21; this JVM is Java "
                    + Runtime.version().feature());
        }
    }

    /**
     * A new, unstarted virtual thread.
     *
     * @param body what it runs
     * @param name its name
     * @return the thread
     * @throws IllegalStateException before Java 21
     */
    public static Thread unstarted(Runnable body, String name) {
        require("a virtual thread");
        try {
            Object builder = Objects.requireNonNull(OF_VIRTUAL).invoke();
            builder = Objects.requireNonNull(NAME).invoke(builder, name);
            return (Thread) Objects.requireNonNull(UNSTARTED).invoke(builder, body);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("could not start a virtual thread", e);
        }
    }
}
