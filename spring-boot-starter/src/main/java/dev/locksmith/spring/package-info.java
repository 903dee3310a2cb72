/**
 * Spring Boot auto-configuration for locksmith. With {@code spring-boot-starter-jooq} (a
 * {@code DataSource} and Boot's {@code DSLContext}) and this starter on the class path, an
 * application gets the repositories as beans built on Boot's {@code DSLContext}, so that they
 * take part in Spring-managed transactions; the schema migrated at start-up
 * ({@link dev.locksmith.spring.LocksmithSchemaMigration}); a job worker for every
 * {@link dev.locksmith.spring.LocksmithHandler} bean or method, started once the context is
 * refreshed and stopped gracefully at shutdown ({@link dev.locksmith.spring.LocksmithWorkers});
 * the {@code locksmith.*} properties ({@link dev.locksmith.spring.LocksmithProperties}),
 * validated when bound; a health indicator with Spring Boot 3's Actuator; metrics on the
 * application's {@code MeterRegistry} ({@code locksmith-micrometer} comes with the starter); and
 * traces with {@code locksmith-opentelemetry} and an {@code OpenTelemetry} bean. One INFO line at
 * start-up names whatever of the last three is off and what turns it on.
 */
@NullMarked
package dev.locksmith.spring;

import org.jspecify.annotations.NullMarked;
