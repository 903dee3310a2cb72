package dev.locksmith.schedules;

import dev.locksmith.internal.Texts;
import dev.locksmith.jobs.NewJob;
import java.time.Instant;
import java.util.Objects;

/**
 * A recurring job: its name, when it recurs, the job each occurrence enqueues, and what happens
 * to occurrences missed during downtime. Immutable, validated when built; registered with
 * {@link Schedules#register}.
 *
 * <pre>{@code
 * Schedule nightly = Schedule.builder(
 *                 "nightly-report",
 *                 Trigger.cron("0 3 * * *", "Europe/Berlin"),
 *                 NewJob.builder("reports", "nightly").payload("{\"format\": \"pdf\"}").build())
 *         .misfire(MisfirePolicy.RUN_ONCE)
 *         .build();
 * }</pre>
 *
 * @param name unique name, 1 to 128 characters, not blank; registering the same name again
 *     changes that schedule
 * @param trigger when it recurs
 * @param template the job each occurrence enqueues: its queue, kind, payload, priority,
 *     {@code maxAttempts} and shard. No delay and no unique key: each occurrence's job gets the
 *     unique key {@link Schedules#uniqueKey(String, Instant) schedule:&lt;name&gt;:&lt;occurrence&gt;}
 * @param misfire what a tick enqueues for overdue occurrences; default
 *     {@link MisfirePolicy#RUN_ONCE}
 */
public record Schedule(String name, Trigger trigger, NewJob template, MisfirePolicy misfire) {

    /** Longest name: 128 characters. */
    public static final int MAX_NAME_LENGTH = 128;

    /**
     * Validates every field; see the record's description.
     *
     * @param name 1 to 128 characters, not blank
     * @param trigger when it recurs
     * @param template a job without delay or unique key
     * @param misfire the misfire policy
     * @throws IllegalArgumentException naming the invalid field
     * @throws NullPointerException when a field is null
     */
    public Schedule {
        Texts.requireName("name", name, MAX_NAME_LENGTH);
        Objects.requireNonNull(trigger, "trigger");
        Objects.requireNonNull(template, "template");
        Objects.requireNonNull(misfire, "misfire");
        if (!template.delay().isZero()) {
            throw new IllegalArgumentException("template of schedule '" + name + "' must have no delay, had "
                    + template.delay() + ": an occurrence's job is due when it is enqueued");
        }
        if (template.uniqueKey().isPresent()) {
            throw new IllegalArgumentException("template of schedule '" + name + "' must have no unique key, had '"
                    + template.uniqueKey().get() + "': each occurrence's job gets schedule:<name>:<occurrence>");
        }
    }

    /**
     * A builder with the default misfire policy, {@link MisfirePolicy#RUN_ONCE}.
     *
     * @param name 1 to 128 characters, not blank (checked by {@link Builder#build()})
     * @param trigger when it recurs, such as {@code Trigger.cron("0 * * * *", "UTC")} or
     *     {@code Trigger.every(Duration.ofMinutes(5))}
     * @param template the job each occurrence enqueues, without delay or unique key
     * @return a new builder
     */
    public static Builder builder(String name, Trigger trigger, NewJob template) {
        return new Builder(name, trigger, template);
    }

    /**
     * A builder holding this schedule, to derive a variant.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        return new Builder(name, trigger, template).misfire(misfire);
    }

    /** Builds a {@link Schedule}; validation happens in {@link #build()}. */
    public static final class Builder {
        private final String name;
        private Trigger trigger;
        private NewJob template;
        private MisfirePolicy misfire = MisfirePolicy.RUN_ONCE;

        private Builder(String name, Trigger trigger, NewJob template) {
            this.name = name;
            this.trigger = trigger;
            this.template = template;
        }

        /**
         * When it recurs.
         *
         * @param trigger the trigger
         * @return this builder
         */
        public Builder trigger(Trigger trigger) {
            this.trigger = trigger;
            return this;
        }

        /**
         * The job each occurrence enqueues.
         *
         * @param template a job without delay or unique key (checked by {@link #build()})
         * @return this builder
         */
        public Builder template(NewJob template) {
            this.template = template;
            return this;
        }

        /**
         * What a tick enqueues for overdue occurrences; default {@link MisfirePolicy#RUN_ONCE}.
         *
         * @param misfire the policy
         * @return this builder
         */
        public Builder misfire(MisfirePolicy misfire) {
            this.misfire = misfire;
            return this;
        }

        /**
         * The schedule.
         *
         * @return the validated schedule
         * @throws IllegalArgumentException naming the first invalid field
         * @throws NullPointerException when a field is null
         */
        public Schedule build() {
            return new Schedule(name, trigger, template, misfire);
        }
    }
}
