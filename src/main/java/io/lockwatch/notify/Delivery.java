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
 * @param alarm    of an alarm's event, the alarm as the webhook shows it; else null
 * @param traceParent the W3C traceparent of the span that recorded the notification (its attempts are spans under
 *                 it); null when it was recorded with tracing off
 * @param maxEventsPerRequest the client's: more than 1, its notifications are posted in batches ({@link Dispatch})
 * @param replayed  asked for again by a replay or a redelivery: it comes after the sensor's live events, and says so
 * @param maintenance recorded while a maintenance window was open over its sensor
 */
public record Delivery(UUID id, UUID clientId, String url, String secret, String previousSecret, boolean linked, String sensorId,
                       String address, String type, Integer state, Integer previousState, long sequence,
                       long occurredAt, int attempt, java.util.Map<String, Object> alarm,
                       String traceParent, int maxEventsPerRequest, boolean replayed, boolean maintenance) {

    public Delivery(UUID id, UUID clientId, String url, String secret, String previousSecret, boolean linked,
                    String sensorId, String address, String type, Integer state, Integer previousState, long sequence,
                    long occurredAt, int attempt, java.util.Map<String, Object> alarm, String traceParent,
                    int maxEventsPerRequest, boolean replayed) {
        this(id, clientId, url, secret, previousSecret, linked, sensorId, address, type, state, previousState, sequence,
                occurredAt, attempt, alarm, traceParent, maxEventsPerRequest, replayed, false);
    }

    public Delivery(UUID id, UUID clientId, String url, String secret, String previousSecret, boolean linked,
                    String sensorId, String address, String type, Integer state, Integer previousState, long sequence,
                    long occurredAt, int attempt) {
        this(id, clientId, url, secret, previousSecret, linked, sensorId, address, type, state, previousState, sequence,
                occurredAt, attempt, null, null, 1, false, false);
    }
}
