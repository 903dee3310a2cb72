/**
 * A web dashboard for locksmith's tables: queues with their throughput and jobs (retry, cancel and
 * delete when actions are enabled), recurring schedules, the channel account pool, and the live
 * blocking graph with the lock-wait and deadlock history of the audit.
 *
 * <p>{@link dev.locksmith.dashboard.DashboardConfig} says what the dashboard reads and whether it
 * may change anything (it is read-only by default). {@link dev.locksmith.dashboard.Dashboard}
 * serves it on the JDK's own HTTP server ({@code com.sun.net.httpserver}), on 127.0.0.1 unless told
 * otherwise; {@link dev.locksmith.dashboard.DashboardServlet} mounts it in a servlet container
 * under the host application's security. Both adapt one request handler that does not depend on
 * either: pages are HTML rendered on the server, every value escaped by one function, with a
 * small script that refreshes the live part of a page. Every read is bounded (a {@code LIMIT},
 * capped counts, keyset pagination) and runs in a read-only transaction with a
 * transaction-scoped {@code statement_timeout}.
 */
@NullMarked
package dev.locksmith.dashboard;

import org.jspecify.annotations.NullMarked;
