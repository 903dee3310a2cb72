package com.example.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * An order service on locksmith's Spring Boot starter. Each endpoint shows one pattern:
 *
 * <ul>
 *   <li>{@code POST /orders}: the order and its confirmation job written in one transaction
 *       ({@link OrderService}), the job run by a {@code @LocksmithHandler} ({@link ConfirmationHandler});
 *   <li>{@code POST /payments}: a transfer between accounts that cannot lose money
 *       ({@link PaymentController});
 *   <li>{@code POST /outbound}: a channel account leased around an outbound call and released
 *       with the call's record ({@link OutboundCalls}).
 * </ul>
 *
 * <p>The database is {@code spring.datasource.url} when set, else one found the way locksmith's
 * own tests find one ({@link ProvisionedDatabase}).
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class OrderServiceApplication {

    /**
     * Starts the service.
     *
     * @param args Spring Boot's command line ({@code --server.port=8081}, ...)
     */
    public static void main(String[] args) {
        SpringApplication.run(OrderServiceApplication.class, args);
    }
}
