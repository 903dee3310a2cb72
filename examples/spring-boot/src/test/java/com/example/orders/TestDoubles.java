package com.example.orders;

import dev.locksmith.pool.ChannelAccountPool;
import org.jooq.DSLContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The sender and gateway the tests watch, in place of the logging ones. Imported by
 * {@link OrderServiceTest}, and deliberately not a {@code @Configuration}: the contexts that
 * {@link GracefulShutdownTest} starts itself scan this package, and must not pick it up.
 */
class TestDoubles {

    @Bean
    @Primary
    RecordingConfirmationSender recordingConfirmationSender() {
        return new RecordingConfirmationSender();
    }

    @Bean
    @Primary
    RecordingChannelGateway recordingChannelGateway(ChannelAccountPool pool, DSLContext dsl) {
        return new RecordingChannelGateway(pool, dsl);
    }
}
