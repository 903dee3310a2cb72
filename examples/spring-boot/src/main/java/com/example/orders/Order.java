package com.example.orders;

import java.math.BigDecimal;
import java.time.OffsetDateTime;

/**
 * An order as stored.
 *
 * @param id its id
 * @param customer who placed it
 * @param amount its amount, scale 2
 * @param createdAt when it was stored (database clock)
 */
public record Order(long id, String customer, BigDecimal amount, OffsetDateTime createdAt) {}
