package io.lockwatch.ingest;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * Everything {@link PartitionedIngestIT} checks (the shuffled readings with duplicates, every partition consumed,
 * a partition's quorum queue giving nothing to a second, waiting consumer), on the HA topology's RabbitMQ cluster
 * ({@code scripts/services.sh --ha up}): single active consumer holds on replicated quorum queues too.
 */
@SpringBootTest(properties = {"lockwatch.ingest.partitions=4",
        "spring.rabbitmq.addresses=127.0.0.1:5681,127.0.0.1:5682,127.0.0.1:5683"})
class HaPartitionedIngestIT extends PartitionedIngestIT {

    @Override
    int managementPort() {
        return 15681;
    }
}
