package io.lockwatch.api;

import java.time.OffsetDateTime;
import java.util.List;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import io.lockwatch.ingest.ReadingParser;
import org.openapitools.jackson.nullable.JsonNullable;

/**
 * The request bodies of openapi.yaml, each the schema of its name, field for field ({@code ApiModelsTest} holds
 * them to the contract). Camel's validator has checked a body against its schema before it is bound here
 * ({@link Json#bind}), so types, ranges, patterns and unknown fields are the contract's business; a record adds only
 * what a JSON schema cannot say: that text is plain.
 * <p>
 * In an update, a field that JSON null sets back to the default is a {@link JsonNullable}: undefined when absent,
 * so absent ("leave it") and null ("the default") stay apart.
 */
final class RequestBodies {

    private RequestBodies() {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record SensorCreate(String id, String address, Integer heartbeatTimeoutSeconds, Integer openAlarmSeconds,
                        String openAlarmSeverity, String profile, String deviceId) {
        SensorCreate {
            plain("address", address);
            plain("device_id", deviceId);
            bothOrNeither(profile, deviceId);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record SensorUpdate(String address, JsonNullable<Integer> heartbeatTimeoutSeconds,
                        JsonNullable<Integer> openAlarmSeconds, JsonNullable<String> openAlarmSeverity,
                        JsonNullable<String> profile, JsonNullable<String> deviceId) {
        SensorUpdate {
            plain("address", address);
            if (profile == null) {
                profile = JsonNullable.undefined();
            }
            if (deviceId == null) {
                deviceId = JsonNullable.undefined();
            }
            plain("device_id", deviceId.orElse(null));
            if (profile.isPresent() != deviceId.isPresent()) {
                throw ApiProblem.badRequest(profile.isPresent() ? "device_id" : "profile",
                        "profile and device_id are set together");
            }
            bothOrNeither(profile.orElse(null), deviceId.orElse(null));
        }
    }

    /**
     * A sensor's device profile and its id on that network: both, or neither; the id one an MQTT topic can name
     * (no wildcard, no empty level at either end).
     */
    static void bothOrNeither(String profile, String deviceId) {
        if ((profile == null) != (deviceId == null)) {
            throw ApiProblem.badRequest(profile == null ? "profile" : "device_id",
                    "profile and device_id go together: a sensor names both, or neither");
        }
        if (deviceId != null && (deviceId.contains("+") || deviceId.contains("#") || deviceId.startsWith("/")
                || deviceId.endsWith("/"))) {
            throw ApiProblem.badRequest("device_id", "device_id is a device's id in its network's topics: no + or #, "
                    + "and no / at either end");
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClientCreate(String name, String url, String deliveryMode, List<String> eventTypes,
                        List<String> alarmSeverities, Integer maxEventsPerRequest, Boolean enabled) {
        ClientCreate {
            plain("name", name);
            plain("url", url);
            if (url == null && !"pull".equals(deliveryMode)) {
                throw ApiProblem.badRequest("url", "a client is posted to its url: give one, or delivery_mode pull for "
                        + "a client that reads its feed");
            }
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClientUpdate(String name, String url, String deliveryMode, JsonNullable<List<String>> eventTypes,
                        JsonNullable<List<String>> alarmSeverities, Integer maxEventsPerRequest, Boolean enabled) {
        ClientUpdate {
            plain("name", name);
            plain("url", url);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record GatewayCreate(String id, String description, List<String> sensors) {
        GatewayCreate {
            plain("description", description);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record GatewayUpdate(String description, List<String> sensors) {
        GatewayUpdate {
            plain("description", description);
        }
    }

    /** A client's new API key: what it is called, what it may do, and when it expires (never, unset). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClientKeyCreate(String name, String role, OffsetDateTime expiresAt) {
        ClientKeyCreate {
            plain("name", name);
            if (expiresAt != null && !expiresAt.toInstant().isAfter(java.time.Instant.now())) {
                throw ApiProblem.badRequest("expires_at", "a new key expires in the future");
            }
        }

        java.time.Instant expiry() {
            return expiresAt == null ? null : expiresAt.toInstant();
        }
    }

    /** When a key expires: null never, a time now or past at once. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClientKeyUpdate(JsonNullable<OffsetDateTime> expiresAt) {
        java.time.Instant expiry() {
            return expiresAt == null || !expiresAt.isPresent() || expiresAt.get() == null ? null : expiresAt.get().toInstant();
        }
    }

    /** A link to a client's portal: the role of the session it opens (client-admin unset), how long it is good. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record PortalLinkCreate(String role, Integer ttlSeconds) {
    }

    /** A portal link's token, to exchange for a session. */
    record PortalSessionCreate(String link) {
    }

    record ReplayRequest(OffsetDateTime since) {
    }

    /** A sensor's escalation chain: its steps in order, each after a longer delay than the one before. */
    record EscalationChainChange(List<Step> steps) {

        @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
        record Step(int afterSeconds, java.util.UUID clientId) {
        }

        EscalationChainChange {
            for (int i = 1; i < steps.size(); i++) {
                if (steps.get(i).afterSeconds() <= steps.get(i - 1).afterSeconds()) {
                    throw ApiProblem.badRequest("steps[" + i + "].after_seconds",
                            "each step comes after a longer delay than the one before it");
                }
            }
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record OpenScheduleChange(String timeZone, List<Range> ranges) {

        record Range(List<String> days, String from, String to) {
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record MaintenanceWindowCreate(java.time.Instant startsAt, java.time.Instant endsAt, String reason,
                                   List<String> sensorIds, String addressPrefix) {
        MaintenanceWindowCreate {
            plain("reason", reason);
            plain("address_prefix", addressPrefix);
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record AlarmAcknowledgement(String by, String comment) {
        AlarmAcknowledgement {
            plain("by", by);
            plain("comment", comment);
        }
    }

    /**
     * Text a person can read back: not only blanks, no control character but tabs and line breaks (PostgreSQL keeps
     * no NUL), no broken UTF-16 escape. The contract gives the lengths; a pattern for this would answer in regex.
     */
    static void plain(String field, String text) {
        if (text == null) {
            return;
        }
        if (text.isBlank()) {
            throw ApiProblem.badRequest(field, field + " must not be blank");
        }
        if (!ReadingParser.isPlainText(text, true)) {
            throw ApiProblem.badRequest(field, field + " must not contain control characters other than tabs and line "
                    + "breaks (NUL, for example), nor a broken UTF-16 escape");
        }
    }
}
