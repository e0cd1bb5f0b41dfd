package io.lockwatch.ingest;

import org.apache.camel.component.springrabbit.DefaultListenerContainerFactory;
import org.apache.camel.component.springrabbit.SpringRabbitMQEndpoint;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;

/**
 * Camel's listener containers, except that with partitioned ingest the container of the readings queue starts
 * with no queue and is handed to {@link IngestPartitions}, which gives it this instance's partitions.
 */
public class IngestListenerContainerFactory extends DefaultListenerContainerFactory {

    private final IngestPartitions partitions;
    private final IngestProperties props;

    public IngestListenerContainerFactory(IngestPartitions partitions, IngestProperties props) {
        this.partitions = partitions;
        this.props = props;
    }

    @Override
    public AbstractMessageListenerContainer createListenerContainer(SpringRabbitMQEndpoint endpoint) {
        AbstractMessageListenerContainer listener = super.createListenerContainer(endpoint);
        if (partitions.enabled() && props.queue().equals(endpoint.getQueues())) {
            partitions.attach(listener);
        }
        return listener;
    }
}
