package io.lockwatch.ingest;

import java.util.HashMap;
import java.util.Map;

import org.apache.camel.Exchange;
import org.apache.camel.component.springrabbit.MessagePropertiesConverter;
import org.apache.camel.component.springrabbit.SpringRabbitMQConstants;
import org.apache.camel.spi.HeaderFilterStrategy;
import org.springframework.amqp.core.MessageProperties;

/**
 * The headers a reading's exchange carries: only what ingest reads (the delivery tag to acknowledge, the message
 * id and timestamp a reading may take, and the routing a parked message keeps). Camel's default copies every
 * property and header of every message, a cost per message that the drain's profile showed.
 */
class ReadingHeaders implements MessagePropertiesConverter {

    @Override
    public Map<String, Object> fromMessageProperties(MessageProperties properties, Exchange exchange) {
        Map<String, Object> headers = new HashMap<>(8);
        if (properties == null) {
            return headers;
        }
        headers.put(SpringRabbitMQConstants.DELIVERY_TAG, properties.getDeliveryTag());
        putIfPresent(headers, SpringRabbitMQConstants.MESSAGE_ID, properties.getMessageId());
        putIfPresent(headers, SpringRabbitMQConstants.TIMESTAMP, properties.getTimestamp());
        putIfPresent(headers, SpringRabbitMQConstants.EXCHANGE_NAME, properties.getReceivedExchange());
        putIfPresent(headers, SpringRabbitMQConstants.ROUTING_KEY, properties.getReceivedRoutingKey());
        putIfPresent(headers, SpringRabbitMQConstants.CONTENT_TYPE, properties.getContentType());
        return headers;
    }

    /** Ingest's consumer never sends: nothing to convert this way. */
    @Override
    public MessageProperties toMessageProperties(Exchange exchange) {
        throw new UnsupportedOperationException("the readings consumer does not reply");
    }

    @Override
    public void setHeaderFilterStrategy(HeaderFilterStrategy headerFilterStrategy) {
        // nothing is copied but the headers above
    }

    private static void putIfPresent(Map<String, Object> headers, String name, Object value) {
        if (value != null) {
            headers.put(name, value);
        }
    }
}
