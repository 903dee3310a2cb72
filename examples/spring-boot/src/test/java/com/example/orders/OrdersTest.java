package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/** {@code POST /orders}: the order and its confirmation job commit together, and the job runs once. */
@OrderServiceTest
class OrdersTest {

    @Autowired
    TestRestTemplate http;

    @Autowired
    DSLContext dsl;

    @Autowired
    RecordingConfirmationSender sender;

    @Test
    void anOrderIsConfirmedExactlyOnce() throws Exception {
        ResponseEntity<JsonNode> placed = http.postForEntity(
                "/orders", Map.of("customer", "ada@example.com", "amount", new BigDecimal("12.50")), JsonNode.class);

        assertThat(placed.getStatusCode()).isEqualTo(HttpStatus.CREATED);
        long orderId = placed.getBody().path("order").path("id").asLong();
        long jobId = placed.getBody().path("confirmationJobId").asLong();
        assertThat(placed.getHeaders().getLocation()).hasToString("/orders/" + orderId);
        assertThat(placed.getBody().path("order").path("amount").decimalValue()).isEqualByComparingTo("12.50");

        assertThat(sender.awaitSent(orderId, Eventually.DEADLINE)).as("sent").isTrue();
        // the send happens inside the handler's transaction; wait for it to commit with the completion
        long jobsLeft = Eventually.read(this::confirmationJobs, n -> n == 0);
        assertThat(jobsLeft).as("confirmation jobs left").isZero();
        List<Record> rows = dsl.fetch("SELECT order_id, job_id FROM sent_confirmations WHERE order_id = ?", orderId);
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).get("job_id", Long.class)).isEqualTo(jobId);
        assertThat(sender.timesSent(orderId)).isEqualTo(1);
        assertThat(dsl.fetchCount(dsl.selectOne().from("locksmith.jobs").where("id = ?", jobId)))
                .as("the completed job is deleted")
                .isZero();

        JsonNode view = http.getForObject("/orders/" + orderId, JsonNode.class);
        assertThat(view.path("order").path("customer").asText()).isEqualTo("ada@example.com");
        assertThat(view.path("confirmationSentAt").isTextual()).isTrue();
    }

    @Test
    void aFailureAfterEnqueueLeavesNeitherTheOrderNorItsJob() {
        ResponseEntity<JsonNode> failed = http.postForEntity(
                "/orders?fail=after-enqueue",
                Map.of("customer", "rolled-back@example.com", "amount", new BigDecimal("99.99")),
                JsonNode.class);

        assertThat(failed.getStatusCode()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
        long orderId = failed.getBody().path("orderId").asLong();
        long jobId = failed.getBody().path("jobId").asLong();
        assertThat(orderId).as("the order was written before the failure").isPositive();
        assertThat(jobId).as("the job was enqueued before the failure").isPositive();
        assertThat(dsl.fetchCount(dsl.selectOne().from("orders").where("id = ?", orderId)))
                .isZero();
        assertThat(dsl.fetchCount(dsl.selectOne().from("orders").where("customer = ?", "rolled-back@example.com")))
                .isZero();
        assertThat(dsl.fetchCount(dsl.selectOne().from("locksmith.jobs").where("id = ?", jobId)))
                .isZero();
        assertThat(dsl.fetchCount(dsl.selectOne().from("sent_confirmations").where("order_id = ?", orderId)))
                .isZero();
    }

    @Test
    void aBadOrderIsRefusedWithTheReason() {
        ResponseEntity<JsonNode> refused = http.postForEntity(
                "/orders", Map.of("customer", "ada@example.com", "amount", new BigDecimal("1.005")), JsonNode.class);

        assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(refused.getBody().path("detail").asText())
                .isEqualTo("amount must be positive, with at most two decimal places and ten digits before the point,"
                        + " was 1.005");
    }

    private long confirmationJobs() {
        return dsl.fetchSingle("SELECT count(*) FROM locksmith.jobs WHERE queue = 'confirmations'")
                .get(0, Long.class);
    }
}
