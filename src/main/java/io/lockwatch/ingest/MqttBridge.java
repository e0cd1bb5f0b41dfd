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
    public static final String ROUTE = "mqtt-readings-are-bridged-to-the-readings-exchange";
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(MqttBridge.class);
    private volatile String lastFailure;

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

    /**
     * Starts the bridge's route if it is not running: again after a connection was refused (logged once per
     * different reason, then retried every period of the calling timer), or after it stopped.
     */
    public void startIfStopped(Exchange exchange) {
        started(exchange.getContext());
    }

    /**
     * Starts the route if stopped; whether it is running, its consumer connected and subscribed (Paho subscribes as
     * it starts). Not an overload of {@link #startIfStopped}: the route's bean call would find two to choose from.
     */
    private boolean started(org.apache.camel.CamelContext camel) {
        org.apache.camel.spi.RouteController routes = camel.getRouteController();
        org.apache.camel.ServiceStatus status = routes.getRouteStatus(ROUTE);
        if (status == null || status.isStarted() || status.isStarting()) {
            return status != null && status.isStarted();
        }
        try {
            routes.startRoute(ROUTE);
            if (lastFailure != null) {
                log.info("The MQTT listener's bridge is connected");
                lastFailure = null;
            }
            return true;
        } catch (Exception e) {
            String reason = e.getMessage();
            if (!java.util.Objects.equals(reason, lastFailure)) {
                log.info("The MQTT listener's bridge could not connect yet, trying again: {}", reason);
                lastFailure = reason;
            }
            return false;
        }
    }

    /**
     * Starts the bridge once Camel's routes run and before Camel's start returns, so before the service says it is
     * ready (health's {@code mqtt}): a reading published once it is ready is taken. Its route starts stopped, as a
     * refused connection must not stop Camel; past {@link #READY_WITHIN} the start goes on, the service not ready,
     * and the timer of routes/mqtt.camel.yaml keeps trying.
     */
    org.apache.camel.StartupListener startedWithCamel() {
        return new org.apache.camel.StartupListener() {
            @Override
            public void onCamelContextStarted(org.apache.camel.CamelContext context, boolean alreadyStarted) {
            }

            @Override
            public void onCamelContextFullyStarted(org.apache.camel.CamelContext context, boolean alreadyStarted)
                    throws InterruptedException {
                long deadline = System.nanoTime() + READY_WITHIN.toNanos();
                while (!started(context)) {
                    if (System.nanoTime() > deadline) {
                        log.warn("The MQTT listener's bridge is not connected after {} s: the service is not ready "
                                + "until it is", READY_WITHIN.toSeconds());
                        return;
                    }
                    // a connection refused (the listener is in this process and already listening): tried again soon
                    Thread.sleep(200);
                }
            }
        };
    }

    private static final Duration READY_WITHIN = Duration.ofSeconds(30);

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
