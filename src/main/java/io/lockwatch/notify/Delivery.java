package io.lockwatch.notify;

import java.util.UUID;

/**
 * One claimed notification, with what its attempt needs, read at claim time (so a changed URL or secret is
 * used by the next attempt).
 *
 * @param url      null if the client is gone
 * @param previousSecret the client's secret before its last rotation, while it still signs too; else null
 * @param linked   whether the client is still linked to the sensor
 * @param attempt  the number of this attempt, 1 for the first
 */
public record Delivery(UUID id, UUID clientId, String url, String secret, String previousSecret, boolean linked, String sensorId,
                       String address, String type, Integer state, Integer previousState, long sequence,
                       long occurredAt, int attempt) {
}
