package io.lockwatch.api;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.UUID;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.lockwatch.alarms.AlarmStore;
import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryStore;
import io.lockwatch.notify.NotificationQueries;
import io.lockwatch.registry.RegistryFile;
import io.lockwatch.registry.RegistryViews;
import io.lockwatch.devices.Devices;
import org.apache.camel.Exchange;
import org.openapitools.jackson.nullable.JsonNullableModule;

/** Request and response helpers shared by the API beans. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper().registerModule(new JavaTimeModule())
            .registerModule(new JsonNullableModule()) // an update's fields: absent, null and given apart
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            // records of other packages that are the contract's schemas field for field, named as it names them
            // (those packages know no JSON): the registry's views, a registry file's row, a day's counts, alarms,
            // notifications
            .addMixIn(RegistryViews.Sensor.class, SnakeCaseNames.class)
            .addMixIn(RegistryViews.DeviceHealth.class, SnakeCaseNames.class)
            .addMixIn(RegistryViews.Client.class, SnakeCaseNames.class)
            .addMixIn(RegistryViews.ClientWithSecret.class, ClientWithSecretNames.class)
            .addMixIn(RegistryViews.Overview.class, SnakeCaseNames.class)
            .addMixIn(RegistryViews.SensorCounts.class, SnakeCaseNames.class)
            .addMixIn(RegistryViews.Kept.class, SnakeCaseNames.class)
            .addMixIn(RegistryFile.Row.class, SnakeCaseNames.class)
            .addMixIn(RegistryFile.NewClient.class, SnakeCaseNames.class)
            .addMixIn(io.lockwatch.alarms.AlarmStore.Step.class, SnakeCaseNames.class)
            .addMixIn(io.lockwatch.alarms.OpenSchedules.View.class, SnakeCaseNames.class)
            .addMixIn(io.lockwatch.maintenance.MaintenanceWindows.Window.class, SnakeCaseNames.class)
            .addMixIn(io.lockwatch.alarms.AlarmStore.Escalation.class, SnakeCaseNames.class)
            .addMixIn(RegistryFile.NewCredential.class, SnakeCaseNames.class)
            .addMixIn(DailyCount.class, SnakeCaseNames.class)
            .addMixIn(AlarmStore.Alarm.class, SnakeCaseNames.class)
            .addMixIn(NotificationQueries.Notification.class, SnakeCaseNames.class)
            .addMixIn(NotificationQueries.AttemptMade.class, SnakeCaseNames.class)
            .addMixIn(NotificationQueries.NotificationDetail.class, NotificationDetailNames.class)
            .addMixIn(Devices.Gateway.class, GatewayNames.class)
            .addMixIn(Devices.Credential.class, SnakeCaseNames.class)
            .addMixIn(Devices.NewCredential.class, NewCredentialNames.class);

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    private interface SnakeCaseNames {
    }

    /** The contract's Gateway: its sensors are left out of a listing, which gives their number only. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    private interface GatewayNames {
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        java.util.List<String> sensors();
    }

    /** The contract's CredentialWithSecret: a Credential's fields and secret, side by side. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    private interface NewCredentialNames {
        @JsonUnwrapped
        Devices.Credential credential();
    }

    /** The contract's NotificationDetail: a Notification's fields and attempts_made, side by side. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    private interface NotificationDetailNames {
        @JsonUnwrapped
        NotificationQueries.Notification notification();
    }

    /** The contract's ClientWithSecret: a Client's fields and webhook_secret, side by side. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    private interface ClientWithSecretNames {
        @JsonUnwrapped
        RegistryViews.Client client();
    }

    private Json() {
    }

    /** The request body as JSON; not JSON is a 400. */
    static JsonNode body(Exchange exchange) {
        Object body = exchange.getMessage().getBody();
        try {
            if (body instanceof byte[] bytes) {
                return MAPPER.readTree(bytes);
            }
            if (body instanceof InputStream in) {
                return MAPPER.readTree(in);
            }
            return MAPPER.readTree(exchange.getMessage().getBody(String.class));
        } catch (IOException e) {
            throw ApiProblem.notJson();
        }
    }

    /**
     * The request body bound to its model ({@link RequestBodies}). Camel's validator has checked it against the
     * contract already; a body that still does not bind is a 400 all the same, and a model's own refusal is its 400.
     */
    static <T> T bind(Exchange exchange, Class<T> model) {
        JsonNode body = body(exchange);
        try {
            return MAPPER.treeToValue(body, model);
        } catch (JsonProcessingException e) {
            if (e.getCause() instanceof ApiProblem problem) {
                throw problem;
            }
            // Jackson's own message names Java types; the answer names the field
            String field = e instanceof JsonMappingException m && !m.getPath().isEmpty() ? field(m.getPath()) : null;
            throw ApiProblem.badRequest(field, (field == null ? "the request body" : field) + " does not match its schema");
        }
    }

    /** Where Jackson was, as the service names a field: {@code steps[0].after_seconds}. */
    static String field(java.util.List<JsonMappingException.Reference> path) {
        StringBuilder out = new StringBuilder();
        for (JsonMappingException.Reference r : path) {
            if (r.getFieldName() != null) {
                out.append(out.isEmpty() ? "" : ".").append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                out.append('[').append(r.getIndex()).append(']');
            }
        }
        return out.toString();
    }

    /**
     * The answer: status, JSON body, and no other header. Request headers never travel back (platform-http
     * would otherwise copy them, Authorization included, into the response).
     */
    static void respond(Exchange exchange, int status, Object body) {
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, status);
        // always one media type: left unset, platform-http would use the path's list of them, which is no media type
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "application/json");
        if (body == null) {
            exchange.getMessage().setBody(null);
            return;
        }
        try {
            exchange.getMessage().setBody(MAPPER.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String header(Exchange exchange, String name) {
        String v = exchange.getMessage().getHeader(name, String.class);
        return v == null || v.isBlank() ? null : v;
    }

    /** A page's size when none is asked, and the most one may ask (the contract's {@code limit}). */
    static final int DEFAULT_LIMIT = 100, MAX_LIMIT = 1000;

    static int limit(Exchange exchange) {
        String v = header(exchange, "limit");
        if (v == null) {
            return DEFAULT_LIMIT;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < 1 || n > MAX_LIMIT) {
                throw ApiProblem.badRequest("limit", "limit must be between 1 and " + MAX_LIMIT);
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiProblem.badRequest("limit", "limit must be a whole number");
        }
    }

    static long time(Exchange exchange, String name, long otherwise) {
        String v = header(exchange, name);
        if (v == null) {
            return otherwise;
        }
        Instant t;
        try {
            t = OffsetDateTime.parse(v).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiProblem.badRequest(name, name + " must be an RFC 3339 time with an offset, e.g. 2026-11-21T12:00:00Z");
        }
        return storable(t, name).toEpochMilli();
    }

    /** The time if lockwatch can hold it; else a 400 naming the parameter and the range. */
    static Instant storable(Instant t, String name) {
        if (!storable(t)) {
            throw ApiProblem.badRequest(name, name + " must be a time from " + Instant.ofEpochMilli(HistoryStore.EARLIEST_MS)
                    + " to " + Instant.ofEpochMilli(HistoryStore.LATEST_MS).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        }
        return t;
    }

    /** A time lockwatch can hold (HistoryStore.EARLIEST_MS to LATEST_MS); a larger one would not even fit in epoch ms. */
    static boolean storable(Instant t) {
        return !t.isBefore(Instant.ofEpochMilli(HistoryStore.EARLIEST_MS)) && !t.isAfter(Instant.ofEpochMilli(HistoryStore.LATEST_MS));
    }

    /** An optional UUID query parameter; null if absent, a 400 naming it if it is no UUID. */
    static UUID optionalUuid(Exchange exchange, String name) {
        String v = header(exchange, name);
        if (v == null) {
            return null;
        }
        try {
            return UUID.fromString(v);
        } catch (IllegalArgumentException e) {
            throw ApiProblem.badRequest(name, name + " must be a UUID");
        }
    }

    /** An optional sensor id query parameter; null if absent, a 400 naming it if it is not 1 to 16 letters and digits. */
    static String optionalSensorId(Exchange exchange, String name) {
        String v = header(exchange, name);
        if (v != null && !io.lockwatch.ingest.ReadingParser.SENSOR_ID.matcher(v).matches()) {
            throw ApiProblem.badRequest(name, name + " must be 1 to 16 letters and digits");
        }
        return v;
    }

    static UUID uuid(Exchange exchange, String name, String what) {
        String v = header(exchange, name);
        try {
            return UUID.fromString(v);
        } catch (RuntimeException e) {
            throw ApiProblem.notFound(what + " " + v);
        }
    }

    static String instant(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }

    /** A page from {@code limit + 1} rows ordered by id: the extra row only says there is a next page. */
    static <T> ResponseBodies.Page<T> pageById(java.util.List<T> rows, int limit, java.util.function.Function<T, String> id) {
        boolean more = rows.size() > limit;
        return new ResponseBodies.Page<>(more ? rows.subList(0, limit) : rows, more ? id.apply(rows.get(limit - 1)) : null);
    }

    /**
     * A page from {@code limit + 1} rows ordered by (time, id) descending: the extra row only says there is a next
     * page, whose cursor names the last row shown.
     */
    static <T> ResponseBodies.Page<T> pageByTime(java.util.List<T> rows, int limit, java.util.function.Function<T, Instant> time,
                                                 java.util.function.Function<T, UUID> id) {
        if (rows.size() <= limit) {
            return new ResponseBodies.Page<>(rows, null);
        }
        T last = rows.get(limit - 1);
        return new ResponseBodies.Page<>(rows.subList(0, limit), java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString((time.apply(last) + "|" + id.apply(last)).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /** The (time, id) a cursor of {@link #pageByTime} names; null for the first page; a 400 if it is not one. */
    static String[] timeCursor(String cursor) {
        if (cursor == null) {
            return null;
        }
        try {
            String[] parts = new String(java.util.Base64.getUrlDecoder().decode(cursor),
                    java.nio.charset.StandardCharsets.UTF_8).split("\\|");
            // a time a page could have shown, and the id after it: anything else is forged
            if (parts.length != 2 || !storable(Instant.parse(parts[0]))) {
                throw new IllegalArgumentException();
            }
            UUID.fromString(parts[1]);
            return parts;
        } catch (RuntimeException e) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
    }
}
