package com.example.orders;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** The example's sender: a log line stands in for the mail. */
@Component
class LoggingConfirmationSender implements ConfirmationSender {

    private static final Logger LOG = LoggerFactory.getLogger(LoggingConfirmationSender.class);

    @Override
    public void send(Order order) {
        LOG.info("to {}: your order {} of {} is confirmed", order.customer(), order.id(), order.amount());
    }
}
