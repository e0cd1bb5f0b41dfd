package io.lockwatch.history;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * History of readings, events and delivery attempts.
 *
 * @param queue           durable queue that carries applied readings from ingest to history, a batch a message
 * @param batchSize       readings written to the history store in one insert (at most)
 * @param batchInterval   longest a reading waits for its insert
 * @param prefetch        unacknowledged history messages (each holds up to 250 readings of an ingest batch)
 * @param exportInterval  with ClickHouse: how often new events and delivery attempts are exported
 * @param exportBatch     with ClickHouse: events or attempts exported in one insert
 */
@ConfigurationProperties("lockwatch.history")
public record HistoryProperties(String queue, int batchSize, Duration batchInterval, int prefetch,
                                Duration exportInterval, int exportBatch) {
}
