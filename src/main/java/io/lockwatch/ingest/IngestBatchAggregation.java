package io.lockwatch.ingest;

import com.rabbitmq.client.Channel;
import org.apache.camel.AggregationStrategy;
import org.apache.camel.Exchange;
import org.apache.camel.component.springrabbit.SpringRabbitMQConstants;

/** Collects parsed messages into an {@link IngestBatch}; the aggregated exchange carries only the batch. */
public class IngestBatchAggregation implements AggregationStrategy {

    private final boolean forwardArrays;

    /** @param forwardArrays with partitions: the readings of an array message are forwarded to their own */
    public IngestBatchAggregation(boolean forwardArrays) {
        this.forwardArrays = forwardArrays;
    }

    @Override
    public Exchange aggregate(Exchange batchExchange, Exchange next) {
        Object parsed = next.getMessage().getBody();
        Channel channel = next.getProperty(SpringRabbitMQConstants.CHANNEL, Channel.class);
        Long deliveryTag = next.getMessage().getHeader(SpringRabbitMQConstants.DELIVERY_TAG, Long.class);
        Exchange target = batchExchange;
        if (target == null) {
            target = next;
            target.getMessage().setBody(new IngestBatch());
        }
        target.getMessage().getBody(IngestBatch.class).add(parsed, channel, deliveryTag, forwardArrays);
        return target;
    }
}
