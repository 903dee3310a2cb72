package com.example.orders;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /outbound}: a call made as a leased channel account ({@link OutboundCalls}). */
@RestController
class OutboundController {

    private final OutboundCalls calls;

    OutboundController(OutboundCalls calls) {
        this.calls = calls;
    }

    @PostMapping("/outbound")
    OutboundCalls.OutboundCall call(@RequestBody Outbound body) {
        if (body.message() == null || body.message().isEmpty()) {
            throw new IllegalArgumentException("message is required");
        }
        return calls.call(body.message());
    }

    /**
     * The body of {@code POST /outbound}.
     *
     * @param message what to send
     */
    record Outbound(String message) {}
}
