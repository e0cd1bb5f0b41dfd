package io.lockwatch.ingest;

import org.apache.camel.component.springrabbit.DefaultListenerContainerFactory;
import org.apache.camel.component.springrabbit.SpringRabbitMQEndpoint;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;

/**
 * Camel's listener containers, except for the readings queue's: with partitioned ingest it starts with no queue and
 * is handed to {@link IngestPartitions}, which gives it this instance's partitions; and it has no retry advice.
 * Camel wraps every listener in Spring Retry's interceptor (an AOP proxy and a retry context per message), but the
 * readings route handles every failure itself ({@code in-memory-steps}) and never throws back to the container, so
 * that wrapper could only cost: 6% of the consumer thread's samples in the drain's profile.
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
        if (props.queue().equals(endpoint.getQueues())) {
            listener.setAdviceChain();
            if (partitions.enabled()) {
                partitions.attach(listener);
            }
        }
        return listener;
    }
}
