/** The workloads of {@code locksmith bench} and {@code locksmith demo}: each runs the library and a hand-written JDBC baseline on the same server in the same run. */
package dev.locksmith.bench;
