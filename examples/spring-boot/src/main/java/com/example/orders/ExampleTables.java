package com.example.orders;

import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.table;

import java.math.BigDecimal;
import java.time.OffsetDateTime;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.SQLDataType;

/**
 * The service's own tables (created by {@code db/changelog/example.xml}), named for jOOQ's DSL.
 * A real service would generate these classes, as locksmith generates its own; three small tables
 * do not need a code generator in an example.
 */
final class ExampleTables {

    static final Table<Record> ORDERS = table(name("orders"));
    static final Field<Long> ORDERS_ID = field(name("orders", "id"), SQLDataType.BIGINT.identity(true));
    static final Field<String> ORDERS_CUSTOMER = field(name("orders", "customer"), SQLDataType.VARCHAR(200));
    static final Field<BigDecimal> ORDERS_AMOUNT = field(name("orders", "amount"), SQLDataType.NUMERIC(12, 2));
    static final Field<OffsetDateTime> ORDERS_CREATED_AT =
            field(name("orders", "created_at"), SQLDataType.TIMESTAMPWITHTIMEZONE);

    static final Table<Record> SENT_CONFIRMATIONS = table(name("sent_confirmations"));
    static final Field<Long> SENT_ORDER_ID = field(name("sent_confirmations", "order_id"), SQLDataType.BIGINT);
    static final Field<Long> SENT_JOB_ID = field(name("sent_confirmations", "job_id"), SQLDataType.BIGINT);
    static final Field<OffsetDateTime> SENT_AT =
            field(name("sent_confirmations", "sent_at"), SQLDataType.TIMESTAMPWITHTIMEZONE);

    static final Table<Record> OUTBOUND_CALLS = table(name("outbound_calls"));
    static final Field<Long> CALLS_ID = field(name("outbound_calls", "id"), SQLDataType.BIGINT.identity(true));
    static final Field<String> CALLS_CHANNEL_ACCOUNT =
            field(name("outbound_calls", "channel_account"), SQLDataType.VARCHAR(128));
    static final Field<String> CALLS_MESSAGE = field(name("outbound_calls", "message"), SQLDataType.CLOB);
    static final Field<String> CALLS_REFERENCE = field(name("outbound_calls", "reference"), SQLDataType.VARCHAR(200));
    static final Field<OffsetDateTime> CALLS_CALLED_AT =
            field(name("outbound_calls", "called_at"), SQLDataType.TIMESTAMPWITHTIMEZONE);

    private ExampleTables() {}
}
