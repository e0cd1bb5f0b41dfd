package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The same shuffled readings with duplicates as {@link IngestIT} (inherited), through four partition queues on
 * real RabbitMQ: the consistent-hash exchange, the single-active-consumer queues and this one instance taking all
 * four. Afterwards the next context (one queue) binds the single queue again and unbinds the partitions.
 */
@SpringBootTest(properties = "lockwatch.ingest.partitions=4")
class PartitionedIngestIT extends IngestIT {

    @Autowired AmqpAdmin admin;
    @Autowired IngestPartitions partitions;

    /**
     * A partition is a quorum queue with single active consumer: a second consumer (another instance's, here a bare
     * one) waits and is given nothing while the service's consumes, so each sensor's readings keep their order.
     */
    @Test
    void aPartitionsQuorumQueueGivesItsReadingsToOneConsumerAtATime() throws Exception {
        String p0 = IngestPartitions.queueOf(props, 0);
        await().atMost(Duration.ofSeconds(30)).until(() -> partitions.owned().size() == 4);
        com.fasterxml.jackson.databind.JsonNode queue = new io.lockwatch.testing.RabbitManagement(managementPort()).queue("/", p0);
        assertThat(queue.get("type").asText()).isEqualTo("quorum");
        assertThat(queue.at("/arguments/x-single-active-consumer").asBoolean()).isTrue();

        java.util.concurrent.atomic.AtomicInteger stolen = new java.util.concurrent.atomic.AtomicInteger();
        try (var connection = rabbit.getConnectionFactory().createConnection();
             var channel = connection.createChannel(false)) {
            channel.basicConsume(p0, false, new com.rabbitmq.client.DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, com.rabbitmq.client.Envelope envelope,
                                           com.rabbitmq.client.AMQP.BasicProperties properties, byte[] body) {
                    stolen.incrementAndGet();
                }
            });
            // readings of unknown sensors, spread over every partition: the service counts each and acks it
            double before = meters.find("lockwatch.readings.received").counter().count();
            for (int i = 0; i < 200; i++) {
                String sensor = "NoSuchSac" + i;
                rabbit.convertAndSend(props.exchange(), sensor, "{\"sensor_id\":\"" + sensor + "\",\"data\":1}");
            }
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    meters.find("lockwatch.readings.received").counter().count() >= before + 200);
        }
        assertThat(stolen.get()).as("readings given to the waiting consumer").isZero();
    }

    /** The broker's management API: the single node's. */
    int managementPort() {
        return 15672;
    }

    @Test
    void theOneInstanceConsumesEveryPartitionAndTheSingleQueueNoLongerFills() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(partitions.owned()).hasSize(4);
            for (int p = 0; p < 4; p++) {
                Properties queue = admin.getQueueProperties(IngestPartitions.queueOf(props, p));
                assertThat(queue).as("partition %d", p).isNotNull();
                assertThat(queue.get(RabbitAdmin.QUEUE_CONSUMER_COUNT)).isEqualTo(1);
            }
        });
        Properties single = admin.getQueueProperties(props.queue());
        if (single != null) {
            // the unpartitioned queue (left by an earlier run) is unbound: a reading no longer lands there
            int before = ((Number) single.get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue();
            rabbit.convertAndSend(props.exchange(), "NoSuchSensor", "{\"sensor_id\":\"NoSuchSensor\",\"data\":1}");
            double received = meters.find("lockwatch.readings.received").counter().count();
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    meters.find("lockwatch.readings.received").counter().count() > received);
            assertThat(((Number) admin.getQueueProperties(props.queue()).get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue())
                    .isEqualTo(before);
        }
    }
}
