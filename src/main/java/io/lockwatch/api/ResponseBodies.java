package io.lockwatch.api;

import java.time.Instant;
import java.util.List;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.notify.TestPing;
import io.lockwatch.registry.RegistryFile;

/**
 * The answers the API composes itself, each the schema of its name in openapi.yaml ({@code ApiModelsTest} holds them
 * to it), as it does the stores' views that the API answers with (the registry's, an alarm, a notification).
 */
final class ResponseBodies {

    private ResponseBodies() {
    }

    /** SensorPage, ClientPage, ReadingPage, EventPage, AlarmPage, NotificationPage. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Page<T>(List<T> items, String nextCursor) {
    }

    /** SensorList, ClientList, DailyCounts: every item at once. */
    record Items<T>(List<T> items) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record PingResult(boolean delivered, Integer statusCode, long durationMs, String error) {
        static PingResult of(TestPing.Result r) {
            return new PingResult(r.error() == null, r.statusCode(), r.durationMs(), r.error());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Reading(String readingId, String sensorId, int data, Instant measuredAt, Instant receivedAt,
                   String timeSource, boolean registered, String messageId) {
        static Reading of(ReadingRecord r) {
            return new Reading(r.readingId(), r.sensorId(), r.data(), Instant.ofEpochMilli(r.measuredAt()),
                    Instant.ofEpochMilli(r.receivedAt()), r.timeSource(), r.registered(), r.messageId());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Event(String sensorId, long sequence, String type, Integer state, Integer previousState, Instant occurredAt) {
        static Event of(EventRecord e) {
            return new Event(e.sensorId(), e.sequence(), e.type(), e.state(), e.previousState(),
                    Instant.ofEpochMilli(e.occurredAt()));
        }
    }

    /** A page of a client's sensors, and the feed's cursor as of before it was read. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record ClientSensorPage(List<io.lockwatch.registry.RegistryViews.Sensor> items, String nextCursor, String feedCursor) {
    }

    /** A link to a client's portal, to send to the client: good once, until it expires. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record PortalLink(java.util.UUID id, String url, java.time.Instant expiresAt) {
    }

    /** Who calls: an operator's token or a client's key, its role, and the client and key of a key. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Caller(String kind, String role, String name, java.util.UUID clientId, java.util.UUID keyId) {
    }

    /** A client's keys, without their secrets. */
    record ClientKeyList(List<io.lockwatch.selfservice.ClientKeys.Key> items) {
    }

    /** A sensor's escalation chain. */
    record EscalationChain(List<io.lockwatch.alarms.AlarmStore.Step> steps) {
    }

    /** What a registry import did. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record RegistryImported(int rows, Sensors sensors, Clients clients, Links links, Gateways gateways,
                            Credentials credentials, List<RegistryFile.NewClient> newClients,
                            List<RegistryFile.NewCredential> newCredentials) {

        record Sensors(int created, int updated, int unchanged) {
        }

        record Clients(int created, int updated) {
        }

        record Links(int added, int removed) {
        }

        @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
        record Gateways(int created, int sensorsAdded, int sensorsRemoved) {
            static Gateways of(RegistryFile.DeviceCounts d) {
                return new Gateways(d.gatewaysCreated(), d.gatewaySensorsAdded(), d.gatewaySensorsRemoved());
            }
        }

        record Credentials(int created, int revoked) {
            static Credentials of(RegistryFile.DeviceCounts d) {
                return new Credentials(d.credentialsCreated(), d.credentialsRevoked());
            }
        }
    }

    /**
     * A registry import: its state, its step while it runs, what it did once done (RegistryImported's counts) or why
     * it was refused or failed. {@code new_clients} and {@code new_credentials} only in the 202 that accepts a file:
     * their secrets, this once.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    record RegistryImport(java.util.UUID id, String state, int rows, String step,
                          @com.fasterxml.jackson.annotation.JsonRawValue String outcome, String error, Instant createdAt,
                          Instant finishedAt, List<RegistryFile.NewClient> newClients,
                          List<RegistryFile.NewCredential> newCredentials) {
        static RegistryImport of(io.lockwatch.registry.RegistryImports.Job job, List<RegistryFile.NewClient> created,
                                 List<RegistryFile.NewCredential> credentials) {
            return new RegistryImport(job.id(), job.state(), job.rows(), job.step(), job.outcome(), job.error(),
                    job.createdAt(), job.finishedAt(), created, credentials);
        }
    }
}
