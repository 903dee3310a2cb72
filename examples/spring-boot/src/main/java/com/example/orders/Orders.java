package com.example.orders;

import static com.example.orders.ExampleTables.ORDERS;
import static com.example.orders.ExampleTables.ORDERS_AMOUNT;
import static com.example.orders.ExampleTables.ORDERS_CREATED_AT;
import static com.example.orders.ExampleTables.ORDERS_CUSTOMER;
import static com.example.orders.ExampleTables.ORDERS_ID;
import static com.example.orders.ExampleTables.SENT_AT;
import static com.example.orders.ExampleTables.SENT_CONFIRMATIONS;
import static com.example.orders.ExampleTables.SENT_JOB_ID;
import static com.example.orders.ExampleTables.SENT_ORDER_ID;

import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Record4;
import org.springframework.stereotype.Repository;

/** The orders and their sent confirmations. Every method writes or reads in the caller's transaction. */
@Repository
class Orders {

    Order insert(DSLContext tx, String customer, BigDecimal amount) {
        return toOrder(tx.insertInto(ORDERS, ORDERS_CUSTOMER, ORDERS_AMOUNT)
                .values(customer, amount)
                .returningResult(ORDERS_ID, ORDERS_CUSTOMER, ORDERS_AMOUNT, ORDERS_CREATED_AT)
                .fetchSingle());
    }

    Optional<Order> find(DSLContext tx, long id) {
        return tx.select(ORDERS_ID, ORDERS_CUSTOMER, ORDERS_AMOUNT, ORDERS_CREATED_AT)
                .from(ORDERS)
                .where(ORDERS_ID.eq(id))
                .fetchOptional()
                .map(Orders::toOrder);
    }

    /**
     * Records that the confirmation of {@code orderId} is sent. The order id is the primary key, so
     * a second record for one order fails (unique violation) instead of passing unnoticed.
     */
    void recordConfirmation(DSLContext tx, long orderId, long jobId) {
        tx.insertInto(SENT_CONFIRMATIONS, SENT_ORDER_ID, SENT_JOB_ID)
                .values(orderId, jobId)
                .execute();
    }

    /** {@return when the confirmation of {@code orderId} was sent, if it was} */
    Optional<OffsetDateTime> confirmationSentAt(DSLContext tx, long orderId) {
        return tx.select(SENT_AT)
                .from(SENT_CONFIRMATIONS)
                .where(SENT_ORDER_ID.eq(orderId))
                .fetchOptional(SENT_AT);
    }

    private static Order toOrder(Record4<Long, String, BigDecimal, OffsetDateTime> r) {
        return new Order(r.value1(), r.value2(), r.value3(), r.value4());
    }
}
