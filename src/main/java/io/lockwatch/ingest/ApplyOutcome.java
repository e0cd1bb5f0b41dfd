package io.lockwatch.ingest;

import java.util.List;

/**
 * What a batch did to sensor state.
 *
 * @param events      state changes and restored connections, in order per sensor
 * @param applied     readings that became the sensor's newest (change or repeat)
 * @param unknown     readings of sensors that are not registered
 * @param duplicates  readings whose message id was applied before
 * @param stale       readings older than the sensor's newest applied one
 * @param notifications notifications now pending for those changes, and their clients
 * @param registered  the batch's sensors that are registered
 * @param healthNews  sensors whose battery or tamper switch said something new, for the alarms to judge
 */
public record ApplyOutcome(List<SensorEvent> events, int applied, int unknown, int duplicates, int stale,
                           io.lockwatch.notify.Outbox.Notified notifications,
                           java.util.Set<String> registered, int healthNews) {

    static final ApplyOutcome NOTHING = new ApplyOutcome(List.of(), 0, 0, 0, 0,
            io.lockwatch.notify.Outbox.Notified.NONE, java.util.Set.of(), 0);

    ApplyOutcome plus(ApplyOutcome other) {
        List<SensorEvent> all = new java.util.ArrayList<>(events);
        all.addAll(other.events);
        return new ApplyOutcome(all, applied + other.applied, unknown + other.unknown, duplicates + other.duplicates,
                stale + other.stale, notifications.plus(other.notifications), union(registered, other.registered),
                healthNews + other.healthNews);
    }

    private static java.util.Set<String> union(java.util.Set<String> a, java.util.Set<String> b) {
        java.util.Set<String> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return all;
    }
}
