package io.lockwatch.heartbeat;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Connectivity of sensors.
 *
 * @param timeout       a sensor silent longer than this (unless it has its own) is lost
 * @param scanInterval  how often the clustered scan looks for newly silent sensors
 * @param scanBatch     sensors declared lost per transaction
 * @param maxBacklog    the scan waits while the readings queue holds more than this many messages: readings
 *                      still in the broker must count before anyone is declared silent
 */
@ConfigurationProperties("lockwatch.heartbeat")
public record HeartbeatProperties(Duration timeout, Duration scanInterval, int scanBatch, long maxBacklog) {
}
