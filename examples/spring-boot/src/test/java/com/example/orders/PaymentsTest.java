package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/** {@code POST /payments}: money moves between accounts, and the total never changes. */
@OrderServiceTest
class PaymentsTest {

    @Autowired
    TestRestTemplate http;

    @Test
    void aPaymentMovesMoneyOnceAndKeepsTheTotal() {
        long from = open("300.00");
        long to = open("40.00");
        BigDecimal total = total();
        String paymentId = "payment-" + UUID.randomUUID();
        Map<String, Object> payment =
                Map.of("from", from, "to", to, "amount", new BigDecimal("25.50"), "paymentId", paymentId);

        ResponseEntity<JsonNode> paid = http.postForEntity("/payments", payment, JsonNode.class);

        assertThat(paid.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(paid.getBody().path("status").asText()).isEqualTo("TRANSFERRED");
        assertThat(paid.getBody().path("from").path("balance").decimalValue()).isEqualByComparingTo("274.50");
        assertThat(paid.getBody().path("to").path("balance").decimalValue()).isEqualByComparingTo("65.50");
        assertThat(total()).isEqualByComparingTo(total);

        // the same payment id again: reported, not applied a second time
        ResponseEntity<JsonNode> again = http.postForEntity("/payments", payment, JsonNode.class);
        assertThat(again.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(again.getBody().path("status").asText()).isEqualTo("ALREADY_TRANSFERRED");
        assertThat(balance(from)).isEqualByComparingTo("274.50");
        assertThat(balance(to)).isEqualByComparingTo("65.50");
        assertThat(total()).isEqualByComparingTo(total);
    }

    @Test
    void aPaymentBeyondTheBalanceMovesNothing() {
        long from = open("10.00");
        long to = open("0.00");

        ResponseEntity<JsonNode> refused = http.postForEntity(
                "/payments", Map.of("from", from, "to", to, "amount", new BigDecimal("10.01")), JsonNode.class);

        assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(refused.getBody().path("status").asText()).isEqualTo("INSUFFICIENT_FUNDS");
        assertThat(balance(from)).isEqualByComparingTo("10.00");
        assertThat(balance(to)).isEqualByComparingTo("0.00");
    }

    @Test
    void theDemoAccountsAreOpenedAtStartUp() {
        JsonNode accounts = http.getForObject("/accounts", JsonNode.class).path("accounts");

        assertThat(accounts.get(0).path("balance").decimalValue()).isEqualByComparingTo("1000.00");
        assertThat(accounts.get(1).path("balance").decimalValue()).isEqualByComparingTo("500.00");
    }

    private long open(String balance) {
        ResponseEntity<JsonNode> opened =
                http.postForEntity("/accounts", Map.of("openingBalance", new BigDecimal(balance)), JsonNode.class);
        assertThat(opened.getStatusCode()).isEqualTo(HttpStatus.CREATED);
        return opened.getBody().path("id").asLong();
    }

    private BigDecimal balance(long id) {
        return http.getForObject("/accounts/" + id, JsonNode.class)
                .path("balance")
                .decimalValue();
    }

    private BigDecimal total() {
        return http.getForObject("/accounts", JsonNode.class).path("total").decimalValue();
    }
}
