package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.locksmith.pool.ChannelAccount;
import dev.locksmith.pool.ChannelAccountPool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/** {@code POST /outbound}: a channel account is leased for the call and released with its record. */
@OrderServiceTest
class OutboundTest {

    private static final List<String> CHANNEL_ACCOUNTS = List.of("channel-1", "channel-2", "channel-3");

    @Autowired
    TestRestTemplate http;

    @Autowired
    DSLContext dsl;

    @Autowired
    ChannelAccountPool pool;

    @Autowired
    RecordingChannelGateway gateway;

    @Test
    void anOutboundCallLeasesAChannelAccountAndReleasesIt() {
        int before = gateway.calls().size();

        ResponseEntity<JsonNode> answer = http.postForEntity("/outbound", Map.of("message", "hello"), JsonNode.class);

        assertThat(answer.getStatusCode()).isEqualTo(HttpStatus.OK);
        String account = answer.getBody().path("channelAccount").asText();
        String owner = answer.getBody().path("leaseOwner").asText();
        assertThat(account).isIn(CHANNEL_ACCOUNTS);
        assertThat(owner).startsWith("outbound-");
        // during the call, the pool's table showed the account leased to this call
        assertThat(gateway.calls().subList(before, gateway.calls().size()))
                .containsExactly(new RecordingChannelGateway.Call(account, owner));
        // afterwards it is idle, and the call is recorded
        assertThat(pool.find(dsl, account).flatMap(ChannelAccount::holder)).isEmpty();
        Record call = dsl.fetchSingle(
                "SELECT channel_account, reference FROM outbound_calls WHERE id = ?",
                answer.getBody().path("id").asLong());
        assertThat(call.get(0, String.class)).isEqualTo(account);
        assertThat(call.get(1, String.class)).isEqualTo("test-hello");
    }

    @Test
    void whileEveryChannelAccountIsLeasedAFurtherCallWaitsThenIsRefused() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(CHANNEL_ACCOUNTS.size());
        try {
            gateway.hold(CHANNEL_ACCOUNTS.size());
            List<Future<ResponseEntity<JsonNode>>> held = new ArrayList<>();
            for (int i = 0; i < CHANNEL_ACCOUNTS.size(); i++) {
                String message = "held-" + i;
                held.add(callers.submit(
                        () -> http.postForEntity("/outbound", Map.of("message", message), JsonNode.class)));
            }
            assertThat(gateway.awaitHeld(30)).as("every account in a call").isTrue();

            ResponseEntity<JsonNode> refused =
                    http.postForEntity("/outbound", Map.of("message", "one too many"), JsonNode.class);

            assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
            assertThat(refused.getBody().path("detail").asText())
                    .isEqualTo("no channel account became idle within PT0.3S");
            gateway.open();
            TreeSet<String> used = new TreeSet<>();
            for (Future<ResponseEntity<JsonNode>> call : held) {
                ResponseEntity<JsonNode> answer = call.get(30, TimeUnit.SECONDS);
                assertThat(answer.getStatusCode()).isEqualTo(HttpStatus.OK);
                used.add(answer.getBody().path("channelAccount").asText());
            }
            assertThat(used).as("no account served two calls at once").containsExactlyElementsOf(CHANNEL_ACCOUNTS);
            assertThat(pool.stats().leased()).isZero();
        } finally {
            gateway.open();
            callers.shutdownNow();
        }
    }
}
