package dev.locksmith.it.tracing;

import static dev.locksmith.codegen.Tables.JOBS;
import static dev.locksmith.it.support.SpanRecorder.CLAIM_LEASED;
import static dev.locksmith.it.support.SpanRecorder.DB_SYSTEM;
import static dev.locksmith.it.support.SpanRecorder.ERROR_TYPE;
import static dev.locksmith.it.support.SpanRecorder.JOB_ATTEMPT;
import static dev.locksmith.it.support.SpanRecorder.JOB_COUNT;
import static dev.locksmith.it.support.SpanRecorder.JOB_ID;
import static dev.locksmith.it.support.SpanRecorder.JOB_KIND;
import static dev.locksmith.it.support.SpanRecorder.OUTCOME;
import static dev.locksmith.it.support.SpanRecorder.QUEUE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.locksmith.Locksmith;
import dev.locksmith.it.support.Await;
import dev.locksmith.it.support.DatabaseTest;
import dev.locksmith.it.support.SpanRecorder;
import dev.locksmith.jobs.JobHandler;
import dev.locksmith.jobs.JobQueue;
import dev.locksmith.jobs.JobWorker;
import dev.locksmith.jobs.NewJob;
import dev.locksmith.jobs.TransactionalWorker;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.jooq.DSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Jobs traced from the request that enqueued them to their handler: the traceparent stored with
 * the job, the handler's span linked to the enqueuing span, and the claim, completion and failure
 * spans around it, with workers running on their own threads and connections.
 */
class TracingJobsTest extends DatabaseTest {

    private SpanRecorder spans;
    private DSLContext traced;
    private JobQueue queue;

    @BeforeEach
    void setUp() {
        dsl.deleteFrom(JOBS).execute();
        spans = new SpanRecorder();
        traced = Locksmith.builder(dsl).observer(spans.tracing()).build().dsl();
        queue = new JobQueue(traced);
    }

    @AfterEach
    void tearDown() {
        spans.close();
    }

    /** Runs {@code work} on this thread inside a new span, the "request", which it ends. */
    private <T> T inRequest(Span request, Callable<T> work) throws Exception {
        try (Scope ignored = request.makeCurrent()) {
            return work.call();
        } finally {
            request.end();
        }
    }

    private String storedTraceparent(long id) {
        return dsl.select(JOBS.TRACEPARENT).from(JOBS).where(JOBS.ID.eq(id)).fetchSingle(JOBS.TRACEPARENT);
    }

    private static String w3c(SpanContext context) {
        return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-"
                + context.getTraceFlags().asHex();
    }

    private JobWorker.Builder worker(String q, JobHandler handler) {
        return JobWorker.builder(traced, q, handler).threads(1).pollInterval(Duration.ofMillis(200));
    }

    @Test
    void aJobCarriesTheEnqueuingTraceToItsHandlerSpanByALink() throws Exception {
        Span request = spans.tracer().spanBuilder("POST /signup").startSpan();
        long id = inRequest(request, () -> queue.enqueue(traced, NewJob.of("traced", "welcome-email")));
        SpanContext enqueuer = request.getSpanContext();

        assertThat(storedTraceparent(id)).isEqualTo(w3c(enqueuer)).endsWith("-01");
        EventData enqueued = spans.await("request", s -> s.getName().equals("POST /signup"))
                .getEvents()
                .get(0);
        assertThat(enqueued.getName()).isEqualTo("locksmith.jobs.enqueued");
        assertThat(enqueued.getAttributes().get(JOB_COUNT)).isEqualTo(1L);
        assertThat(enqueued.getAttributes().get(QUEUE)).isEqualTo("traced");

        // A handler that writes: its job is completed in its transaction, inside its span (one
        // that writes nothing has its job completed after it, in a batch with a span of its own).
        dsl.execute("CREATE TABLE IF NOT EXISTS sent_emails (job_id bigint NOT NULL)");
        JobHandler handler = (job, tx) -> {
            Span work = spans.tracer().spanBuilder("render and send").startSpan();
            try (Scope ignored = work.makeCurrent()) {
                tx.execute("INSERT INTO sent_emails VALUES (?)", job.id());
            } finally {
                work.end();
            }
        };
        SpanData handle;
        try (JobWorker w = worker("traced", handler).build().start()) {
            handle = spans.await("locksmith.job.handle", JOB_ID, id);
        }

        // The handler's span: a trace of its own, linked to exactly the enqueuing span.
        assertThat(handle.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(handle.getInstrumentationScopeInfo().getName()).isEqualTo("dev.locksmith");
        assertThat(handle.getParentSpanContext().isValid()).isFalse();
        assertThat(handle.getTraceId()).isNotEqualTo(enqueuer.getTraceId());
        assertThat(handle.getLinks()).hasSize(1);
        SpanContext link = handle.getLinks().get(0).getSpanContext();
        assertThat(link.getTraceId()).isEqualTo(enqueuer.getTraceId());
        assertThat(link.getSpanId()).isEqualTo(enqueuer.getSpanId());
        assertThat(link.isRemote()).isTrue();
        assertThat(handle.getAttributes().get(QUEUE)).isEqualTo("traced");
        assertThat(handle.getAttributes().get(JOB_KIND)).isEqualTo("welcome-email");
        assertThat(handle.getAttributes().get(JOB_ATTEMPT)).isEqualTo(1L);
        assertThat(handle.getAttributes().get(JOB_COUNT)).isEqualTo(1L);
        assertThat(handle.getAttributes().get(OUTCOME)).isEqualTo("ok");
        assertThat(handle.getAttributes().get(AttributeKey.stringKey("messaging.operation.type")))
                .isEqualTo("process");
        assertThat(handle.getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
                .isEqualTo(Long.toString(id));
        assertThat(handle.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);

        // Inside it: the completion (in the handler's transaction) and the handler's own span.
        SpanData complete = spans.await("locksmith.job.complete", JOB_ID, id);
        assertThat(complete.getTraceId()).isEqualTo(handle.getTraceId());
        assertThat(complete.getParentSpanId()).isEqualTo(handle.getSpanId());
        assertThat(complete.getKind()).isEqualTo(SpanKind.INTERNAL);
        assertThat(complete.getAttributes().get(OUTCOME)).isEqualTo("ok");
        assertThat(complete.getAttributes().get(DB_SYSTEM)).isEqualTo("postgresql");
        SpanData own = spans.await("the handler's span", s -> s.getName().equals("render and send"));
        assertThat(own.getTraceId()).isEqualTo(handle.getTraceId());
        assertThat(own.getParentSpanId()).isEqualTo(handle.getSpanId());

        // Before it, on the claimer's thread: the claim that leased the job.
        SpanData claim = spans.await(
                "the claim that got the job",
                s -> s.getName().equals("locksmith.job.claim")
                        && "ok".equals(s.getAttributes().get(OUTCOME)));
        assertThat(claim.getAttributes().get(QUEUE)).isEqualTo("traced");
        assertThat(claim.getAttributes().get(CLAIM_LEASED)).isTrue();
        assertThat(claim.getAttributes().get(DB_SYSTEM)).isEqualTo("postgresql");
        assertThat(claim.getEndEpochNanos()).isLessThanOrEqualTo(handle.getStartEpochNanos());
        assertThat(spans.named("locksmith.job.claim"))
                .allSatisfy(c -> assertThat(c.getAttributes().get(OUTCOME)).isIn("ok", "empty"));
    }

    /**
     * A handler that writes nothing has its job completed after it ends, in a batch on the
     * completer's thread: that completion span has no parent, and links to the handler span of each
     * job it completes (before, it was a root span with no link at all: an orphan).
     */
    @Test
    void aBatchedCompletionLinksToTheHandlerSpanOfEveryJobItCompletes() throws Exception {
        List<Long> ids = queue.enqueueAll(traced, Collections.nCopies(6, NewJob.of("batched", "notify")));
        try (JobWorker w = worker("batched", (job, tx) -> {}).threads(3).build().start()) {
            for (long id : ids) {
                spans.await("locksmith.job.handle", JOB_ID, id);
            }
            Await.until("every job completed", Duration.ofSeconds(30), () -> dsl.fetchCount(JOBS) == 0);
        }
        List<SpanData> handles = spans.named("locksmith.job.handle");
        List<SpanData> completions = spans.named("locksmith.job.complete");
        assertThat(completions).isNotEmpty().allSatisfy(complete -> {
            assertThat(complete.getParentSpanContext().isValid()).isFalse();
            assertThat(complete.getAttributes().get(OUTCOME)).isEqualTo("ok");
        });
        List<String> linked = completions.stream()
                .flatMap(c -> c.getLinks().stream())
                .map(l -> l.getSpanContext().getTraceId() + "/"
                        + l.getSpanContext().getSpanId())
                .toList();
        assertThat(linked)
                .as("each handler run linked once, by the completion that settled its job")
                .containsExactlyInAnyOrderElementsOf(handles.stream()
                        .map(h -> h.getTraceId() + "/" + h.getSpanId())
                        .toList());
    }

    @Test
    void aJobInsertedWithoutATraceRunsWithAnUnlinkedHandlerSpan() throws Exception {
        // Another producer, plain SQL: no traceparent, and one that is well-formed but names no
        // span (all-zero ids pass the column's CHECK, and the propagator refuses them).
        long plain = dsl.resultQuery(
                        "INSERT INTO locksmith.jobs (queue, kind) VALUES ('untraced', 'plain') RETURNING id")
                .fetchSingle()
                .get(0, Long.class);
        long zeros = dsl.resultQuery(
                        "INSERT INTO locksmith.jobs (queue, kind, traceparent) VALUES ('untraced', 'zeros', ?) "
                                + "RETURNING id",
                        "00-00000000000000000000000000000000-0000000000000000-01")
                .fetchSingle()
                .get(0, Long.class);

        SpanData plainHandle;
        SpanData zerosHandle;
        try (JobWorker w = worker("untraced", (job, tx) -> {}).build().start()) {
            plainHandle = spans.await("locksmith.job.handle", JOB_ID, plain);
            zerosHandle = spans.await("locksmith.job.handle", JOB_ID, zeros);
        }
        for (SpanData handle : List.of(plainHandle, zerosHandle)) {
            assertThat(handle.getLinks()).isEmpty();
            assertThat(handle.getParentSpanContext().isValid()).isFalse();
            assertThat(handle.getAttributes().get(OUTCOME)).isEqualTo("ok");
        }
        assertThat(dsl.fetchCount(JOBS, JOBS.QUEUE.eq("untraced"))).isZero();
    }

    @Test
    void aHandlerThatThrowsEndsItsSpanInErrorWithTheFailureRecordedInside() throws Exception {
        Span request = spans.tracer().spanBuilder("POST /charge").startSpan();
        long id = inRequest(
                request,
                () -> queue.enqueue(
                        traced,
                        NewJob.builder("failing", "charge").maxAttempts(1).build()));

        SpanData handle;
        try (JobWorker w = worker("failing", (job, tx) -> {
                    throw new IllegalStateException("card declined");
                })
                .build()
                .start()) {
            handle = spans.await("locksmith.job.handle", JOB_ID, id);
        }

        assertThat(handle.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(handle.getStatus().getDescription()).isEqualTo("card declined");
        assertThat(handle.getAttributes().get(OUTCOME)).isEqualTo("error");
        assertThat(handle.getAttributes().get(ERROR_TYPE)).isEqualTo(IllegalStateException.class.getName());
        assertThat(handle.getEvents()).singleElement().satisfies(event -> {
            assertThat(event.getName()).isEqualTo("exception");
            assertThat(event.getAttributes().get(AttributeKey.stringKey("exception.type")))
                    .isEqualTo(IllegalStateException.class.getName());
            assertThat(event.getAttributes().get(AttributeKey.stringKey("exception.message")))
                    .isEqualTo("card declined");
        });
        assertThat(handle.getLinks())
                .extracting(l -> l.getSpanContext().getSpanId())
                .containsExactly(request.getSpanContext().getSpanId());

        // The failed attempt is recorded inside the handler's span; the job failed for good,
        // which is an outcome of the recording, not an error of it.
        SpanData fail = spans.await("locksmith.job.fail", JOB_ID, id);
        assertThat(fail.getTraceId()).isEqualTo(handle.getTraceId());
        assertThat(fail.getParentSpanId()).isEqualTo(handle.getSpanId());
        assertThat(fail.getAttributes().get(OUTCOME)).isEqualTo("failed");
        assertThat(fail.getAttributes().get(JOB_ATTEMPT)).isEqualTo(1L);
        assertThat(fail.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        assertThat(spans.named("locksmith.job.complete")).isEmpty();
    }

    @Test
    void aBatchLinksToTheEnqueuingSpanOfEachOfItsJobsOnce() throws Exception {
        Span first = spans.tracer().spanBuilder("request A").startSpan();
        inRequest(first, () -> queue.enqueue(traced, NewJob.of("batch", "a")));
        Span second = spans.tracer().spanBuilder("request B").startSpan();
        inRequest(second, () -> queue.enqueueAll(traced, List.of(NewJob.of("batch", "b"), NewJob.of("batch", "b"))));
        queue.enqueue(traced, NewJob.of("batch", "untraced"));
        assertThat(first.getSpanContext().getTraceId())
                .isNotEqualTo(second.getSpanContext().getTraceId());

        SpanData handle;
        try (TransactionalWorker w = TransactionalWorker.builder(traced, "batch", (jobs, tx) -> {})
                .threads(1) // one claimer: the four jobs are one batch
                .batchSize(10)
                .pollInterval(Duration.ofMillis(200))
                .build()
                .start()) {
            handle = spans.await("locksmith.job.handle", JOB_COUNT, 4L);
        }

        assertThat(handle.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(handle.getParentSpanContext().isValid()).isFalse();
        assertThat(handle.getAttributes().get(JOB_KIND)).isEqualTo("mixed");
        assertThat(handle.getAttributes().get(JOB_ID)).isNull();
        assertThat(handle.getAttributes().get(AttributeKey.longKey("messaging.batch.message_count")))
                .isEqualTo(4L);
        assertThat(handle.getLinks())
                .extracting(LinkData::getSpanContext)
                .extracting(c -> c.getTraceId() + "/" + c.getSpanId())
                .containsExactlyInAnyOrder(
                        first.getSpanContext().getTraceId() + "/"
                                + first.getSpanContext().getSpanId(),
                        second.getSpanContext().getTraceId() + "/"
                                + second.getSpanContext().getSpanId());
        SpanData claim = spans.await(
                "the transactional claim of the batch",
                s -> s.getName().equals("locksmith.job.claim")
                        && "ok".equals(s.getAttributes().get(OUTCOME)));
        assertThat(claim.getAttributes().get(CLAIM_LEASED)).isFalse();
    }

    @Test
    void enqueueOutsideAnySpanStoresNoTraceparent() {
        assertThat(Span.current().getSpanContext().isValid()).isFalse();
        long id = queue.enqueue(traced, NewJob.of("outside", "k"));
        assertThat(storedTraceparent(id)).isNull();

        try (Scope ignored = Span.wrap(SpanContext.getInvalid()).makeCurrent()) {
            long invalid = queue.enqueue(traced, NewJob.of("outside", "k"));
            assertThat(storedTraceparent(invalid)).isNull();
        }
    }

    @Test
    void pollsOutsideATraceThatFindNothingLeaveNoSpanWhileClaimsInsideOneAlwaysDo() throws Exception {
        // A worker's poll runs outside any trace: empty ones would be a root span each, every
        // poll interval, in every worker. Only a poll that claims something is traced.
        for (int i = 0; i < 3; i++) {
            assertThat(queue.claim("quiet", 1, Duration.ofMinutes(1), "w")).isEmpty();
        }
        queue.enqueue(traced, NewJob.of("quiet", "k"));
        assertThat(queue.claim("quiet", 1, Duration.ofMinutes(1), "w")).hasSize(1);
        SpanData poll = spans.await("the poll that claimed", s -> s.getName().equals("locksmith.job.claim"));
        assertThat(poll.getAttributes().get(OUTCOME)).isEqualTo("ok");
        assertThat(poll.getParentSpanContext().isValid()).isFalse();
        assertThat(poll.getStartEpochNanos()).isLessThan(poll.getEndEpochNanos());

        // Inside a caller's span, an empty claim is part of the caller's story: it is a span.
        Span request = spans.tracer().spanBuilder("GET /next").startSpan();
        int claimed = inRequest(
                request,
                () -> dsl.transactionResult(
                        c -> queue.claimInTransaction(c.dsl(), "quiet", 1).size()));
        assertThat(claimed).isZero();
        SpanData empty = spans.await(
                "the empty claim in the request",
                s -> s.getName().equals("locksmith.job.claim")
                        && "empty".equals(s.getAttributes().get(OUTCOME)));
        assertThat(empty.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
        spans.await("the request", s -> s.getName().equals("GET /next"));
        assertThat(spans.named("locksmith.job.claim")).hasSize(2);
    }
}
