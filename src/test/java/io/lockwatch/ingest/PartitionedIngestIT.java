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
