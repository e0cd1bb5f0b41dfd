package io.lockwatch.infra.embedded;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the embedded default: the in-process AMQP broker and PostgreSQL that run when no external
 * service is configured.
 *
 * @param dataDir       where the embedded PostgreSQL keeps its data (and the broker its work files)
 * @param ephemeral     use a fresh directory under {@code dataDir} and delete it on stop (tests)
 * @param postgresPort  loopback port of the embedded PostgreSQL; 0 picks a free one
 * @param brokerPort    loopback port of the embedded AMQP 0-9-1 broker; 0 picks a free one
 * @param mqttPort      loopback port of the embedded MQTT listener (logged at start): 1883 by default, a free one
 *                      (logged) if that is taken; 0 picks a free one
 */
@ConfigurationProperties("lockwatch.embedded")
record EmbeddedProperties(Path dataDir, boolean ephemeral, int postgresPort, int brokerPort, int mqttPort) {
}
