package io.lockwatch.ingest;

import java.time.Duration;
import java.util.List;

import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import org.apache.camel.Exchange;
import org.apache.camel.component.paho.PahoConstants;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;

/**
 * The embedded default's MQTT listener into the readings exchange ({@code routes/mqtt.camel.yaml}): each message
 * goes to the readings exchange as RabbitMQ's MQTT plugin would put it there, its topic's {@code /} and {@code .}
 * swapped into the routing key and its payload as it came, so that ingest reads both brokers' MQTT readings the
 * same way. Confirmed by the broker before the step returns, so the MQTT listener takes it as delivered only then.
 */
public class MqttBridge {

    private static final Duration CONFIRM_WITHIN = Duration.ofSeconds(10);

    private final ConfirmedPublisher publisher;
    private final String readingsExchange;

    public MqttBridge(ConfirmedPublisher publisher, String readingsExchange) {
        this.publisher = publisher;
        this.readingsExchange = readingsExchange;
    }

    public void forwardToReadingsExchange(Exchange exchange) {
        org.apache.camel.Message in = exchange.getMessage();
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        publisher.publish(List.of(new Outgoing(readingsExchange, routingKey(in.getHeader(PahoConstants.MQTT_TOPIC, String.class)),
                new Message(in.getBody(byte[].class), properties))), CONFIRM_WITHIN);
    }

    /** As RabbitMQ's MQTT plugin maps a topic to a routing key: {@code /} becomes {@code .} and {@code .} {@code /}. */
    static String routingKey(String topic) {
        StringBuilder key = new StringBuilder(topic.length());
        for (int i = 0; i < topic.length(); i++) {
            char c = topic.charAt(i);
            key.append(c == '/' ? '.' : c == '.' ? '/' : c);
        }
        return key.toString();
    }
}
