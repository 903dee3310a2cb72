/**
 * Machinery shared by the repositories: rendering statements once, translating errors,
 * savepoints, schema mapping, transaction identity. <b>Not API</b>: the module does not export
 * this package, and on the class path it may change in any release without notice.
 */
@NullMarked
package dev.locksmith.internal;

import org.jspecify.annotations.NullMarked;
