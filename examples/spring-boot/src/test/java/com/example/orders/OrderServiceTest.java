package com.example.orders;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;

/**
 * The whole service on a random port, on the database {@link ProvisionedDatabase} finds (as when
 * it runs: {@code LOCKSMITH_JDBC_URL}, Testcontainers or embedded PostgreSQL), with the recording
 * test doubles of {@link TestDoubles}. Every class with this annotation shares one context, and so
 * one PostgreSQL per test JVM.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"example.channel-max-wait=300ms", "spring.main.banner-mode=off"})
@Import(TestDoubles.class)
@interface OrderServiceTest {}
