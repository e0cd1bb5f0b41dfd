package io.lockwatch.registry;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * What the registry answers with: the contract's Sensor, Client, ClientWithSecret and Overview, field for field.
 * They know no JSON; the API names their fields as the contract does.
 */
public final class RegistryViews {

    private RegistryViews() {
    }

    /**
     * A sensor and its state; {@code state} is null until it is first heard from; {@code openAlarmSeverity} null:
     * major; {@code profile} and {@code deviceId}: its device profile and its id on that network, or null.
     */
    public record Sensor(String id, String address, Integer heartbeatTimeoutSeconds, Integer openAlarmSeconds,
                         String openAlarmSeverity, String profile, String deviceId, Integer state, Instant stateChangedAt, Instant lastSeenAt, String connectivity, long sequence,
                         Instant createdAt, Instant updatedAt, DeviceHealth health) {
    }

    /**
     * What a sensor's device last said of itself, each with the measured time of the reading that said it (null:
     * never said): battery in percent, tamper switch, radio signal (RSSI in dBm, SNR in dB).
     */
    public record DeviceHealth(Double battery, Instant batteryAt, Boolean tamper, Instant tamperAt, Integer rssi,
                               Double snr, Instant signalAt) {
    }

    /** A client, without its secret. */
    public record Client(UUID id, String name, String url, String deliveryMode, List<String> eventTypes,
                         List<String> alarmSeverities,
                         int maxEventsPerRequest, boolean enabled, String pausedReason, Instant pausedAt, Instant failingSince,
                         Instant previousSecretSignsUntil, Instant createdAt, Instant updatedAt) {
    }

    /** A client and its secret in clear: only the answer of a create or a rotation holds one, once. */
    public record ClientWithSecret(Client client, String webhookSecret) {
    }

    /** The counts an operator looks at first. */
    /** {@code kept}: how far back history and finished notifications go (the retention), set by the API. */
    public record Overview(SensorCounts sensors, long alarmsActive, NotificationCounts notifications, Kept kept, Instant at) {

        public Overview withKept(Kept kept) {
            return new Overview(sensors, alarmsActive, notifications, kept, at);
        }
    }

    /** The retention: days of history, and of notifications after they finished. */
    public record Kept(long historyDays, long notificationsDays) {
    }

    public record SensorCounts(long total, long online, long lost, long unknown, long doorsOpen) {
    }

    /** Pending: waiting for their first attempt; retrying: waiting after a failed one. */
    public record NotificationCounts(long pending, long retrying, long dead) {
    }
}
