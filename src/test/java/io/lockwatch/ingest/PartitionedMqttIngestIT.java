package io.lockwatch.ingest;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * The MQTT contract ({@link MqttIngestIT}, inherited) with the readings partitioned: RabbitMQ's MQTT plugin, then
 * the consistent-hash exchange on the routing key lockwatch.readings.<sensor id>, four single-active-consumer
 * queues. Each sensor's readings stay in one partition, so order, once-only notification and parking hold as with
 * one queue.
 */
@SpringBootTest(properties = {"lockwatch.ingest.partitions=4", "lockwatch.notify.poll-interval=100"})
class PartitionedMqttIngestIT extends MqttIngestIT {
}
