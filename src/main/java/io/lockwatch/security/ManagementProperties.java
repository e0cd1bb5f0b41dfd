package io.lockwatch.security;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * What Jolokia (and so Hawtio) may do beyond its allowlist.
 *
 * @param allowUnsafeOperations true lets a full token run any JMX operation and write any attribute: the JVM's
 *                              diagnostics (heap dumps), Camel's send and request operations (which reach every
 *                              endpoint, the database's included) and route updates (which load code). For a
 *                              debugging session on a machine of one's own, never in production.
 */
@ConfigurationProperties("lockwatch.management")
record ManagementProperties(boolean allowUnsafeOperations) {
}
