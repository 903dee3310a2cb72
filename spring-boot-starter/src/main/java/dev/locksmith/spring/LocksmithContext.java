package dev.locksmith.spring;

import org.jooq.DSLContext;

/**
 * The {@code DSLContext} the starter builds locksmith's repositories and workers on: Spring
 * Boot's, so that they take part in Spring-managed transactions, with locksmith's tables rendered
 * in {@code locksmith.schema.name} and the {@code LocksmithObserver} beans combined. A bean of its
 * own type, so that it never competes with Boot's {@code DSLContext} for injection.
 *
 * @param dsl the context
 */
record LocksmithContext(DSLContext dsl) {}
