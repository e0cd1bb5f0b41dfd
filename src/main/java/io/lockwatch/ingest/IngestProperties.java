package io.lockwatch.ingest;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The ingest flow: where readings come from and how they are batched.
 *
 * @param exchange        durable topic exchange sensors publish to, routing key = sensor id
 * @param queue           durable queue the service consumes, bound to the exchange with {@code #}
 * @param invalidQueue    durable queue where rejected messages are parked with their reason
 * @param consumers       concurrent consumers per instance (each has its own channel)
 * @param prefetch        unacknowledged messages per consumer; keep it about twice the batch size
 * @param batchSize       readings applied to PostgreSQL in one transaction: a batch closes at this size…
 * @param batchInterval   …or, once the batch thread is free to apply it, this long after its first message if it
 *                        holds repeats only (a batch that may change a sensor's state goes at once; 0: every batch
 *                        at once); while the thread is busy the batch goes on growing
 * @param batchMaxWait    a batch closes at the latest this long after its first message, busy or not
 * @param partitions      1: one readings queue, for one instance; N &gt; 1 (RabbitMQ only): N partition queues by
 *                        sensor id, shared out among the running instances, for several instances
 * @param rebalanceInterval how often an instance renews its membership and takes up its share of the partitions
 * @param memberTimeout   an instance not heard of for this long is gone; its partitions are taken over
 * @param maxBody         larger bodies are rejected as {@code body_too_large}
 * @param maxArrayBody    the same for a message that holds an array of readings (at most 1,000 of them)
 * @param maxClockSkew    a measured time further ahead of this service's clock is rejected as {@code ts_in_future}
 * @param parkMaxBody     parked bodies are kept up to this size (the rest is cut, and a header says so)
 * @param heldSensors     sensors whose state the consumer holds in memory (about 250 bytes each); the state of
 *                        any others is read with each batch
 */
@ConfigurationProperties("lockwatch.ingest")
public record IngestProperties(String exchange, String queue, String invalidQueue, int consumers, int prefetch,
                               int batchSize, Duration batchInterval, Duration batchMaxWait,
                               int partitions, Duration rebalanceInterval, Duration memberTimeout,
                               DataSize maxBody, DataSize maxArrayBody,
                               Duration maxClockSkew, DataSize parkMaxBody, int heldSensors) {
}
