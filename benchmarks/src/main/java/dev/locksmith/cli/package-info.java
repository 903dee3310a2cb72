/** The {@code locksmith} command line: {@code demo}, {@code bench}, {@code migrate} and {@code locks}. */
package dev.locksmith.cli;
