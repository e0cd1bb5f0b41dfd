package io.lockwatch.ingest;

import java.util.List;

/**
 * What a batch did to sensor state.
 *
 * @param changes     state changes, in order per sensor
 * @param applied     readings that became the sensor's newest (change or repeat)
 * @param unknown     readings of sensors that are not registered
 * @param duplicates  readings whose message id was applied before
 * @param stale       readings older than the sensor's newest applied one
 */
public record ApplyOutcome(List<StateChange> changes, int applied, int unknown, int duplicates, int stale) {
}
