package com.example.orders;

import java.math.BigDecimal;
import java.net.URI;
import java.time.OffsetDateTime;
import org.jooq.DSLContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/** {@code POST /orders} and {@code GET /orders/{id}}. */
@RestController
@RequestMapping("/orders")
class OrderController {

    private final OrderService service;
    private final Orders orders;
    private final DSLContext dsl;

    OrderController(OrderService service, Orders orders, DSLContext dsl) {
        this.service = service;
        this.orders = orders;
        this.dsl = dsl;
    }

    /**
     * Places an order; {@code ?fail=after-enqueue} makes the service fail after it wrote the order
     * and enqueued the job (500, and neither exists afterwards).
     */
    @PostMapping
    ResponseEntity<OrderService.PlacedOrder> place(
            @RequestBody NewOrder body, @RequestParam(name = "fail", required = false) String fail) {
        boolean failAfterEnqueue = false;
        if (fail != null) {
            if (!fail.equals("after-enqueue")) {
                throw new IllegalArgumentException("fail must be after-enqueue, was '" + fail + "'");
            }
            failAfterEnqueue = true;
        }
        NewOrder order = body.checked();
        OrderService.PlacedOrder placed = service.place(order.customer(), order.amount(), failAfterEnqueue);
        return ResponseEntity.created(URI.create("/orders/" + placed.order().id()))
                .body(placed);
    }

    /** The order, and when its confirmation was sent (null until it is). */
    @GetMapping("/{id}")
    OrderView get(@PathVariable long id) {
        Order order = orders.find(dsl, id)
                .orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "no order " + id));
        return new OrderView(order, orders.confirmationSentAt(dsl, id).orElse(null));
    }

    /**
     * The body of {@code POST /orders}.
     *
     * @param customer who orders, 1 to 200 characters, not blank
     * @param amount positive, at most two decimal places
     */
    record NewOrder(String customer, BigDecimal amount) {
        /** Checks the values here rather than in the constructor, so that the 400 says what is wrong. */
        NewOrder checked() {
            if (customer == null || customer.isBlank() || customer.length() > 200) {
                throw new IllegalArgumentException("customer must be 1 to 200 characters and not blank");
            }
            if (amount == null
                    || amount.signum() <= 0
                    || amount.scale() > 2
                    || amount.precision() - amount.scale() > 10) {
                throw new IllegalArgumentException("amount must be positive, with at most two decimal places and ten"
                        + " digits before the point, was " + amount);
            }
            return this;
        }
    }

    /**
     * An order and its confirmation.
     *
     * @param order the order
     * @param confirmationSentAt when its confirmation was sent, or null while it has not been
     */
    record OrderView(Order order, OffsetDateTime confirmationSentAt) {}
}
