package io.lockwatch.adapters;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.Exchange;
import org.apache.camel.component.paho.PahoConstants;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Zigbee2MQTT's device messages as readings ({@code routes/adapters.camel.yaml}). A message on
 * {@code <base-topic>/<friendly name>} is the JSON object of a device's state; it is a reading of the sensor whose
 * {@code device_id} is that friendly name under a profile of this adapter, and of no other sensor: whoever may
 * publish on that broker reports only for the sensors registered with it. The profile's door field gives the door,
 * by its closed and open values; its battery and tamper fields the device's health, a value out of range left out so
 * that the door still counts. Other devices' messages (lights, plugs), a state without its door, and what is no JSON
 * object are no readings: counted, and left alone; so is a state the broker retained from before (no news). The
 * adapter runs on one instance at a time ({@link OneInstance}).
 */
public class Zigbee2MqttAdapter {

    public static final String NAME = "zigbee2mqtt";
    /** The route of routes/adapters.camel.yaml that takes the broker's messages. */
    static final String ROUTE = "zigbee2mqtt-messages-become-readings";
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Zigbee2MqttAdapter.class);
    private static final Duration CONFIRM_WITHIN = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final JdbcTemplate jdbc;
    private final DeviceProfiles profiles;
    private final ConfirmedPublisher publisher;
    private final String readingsExchange;
    private final String baseTopic;
    private final Map<String, Counter> outcomes;
    private final OneInstance leadership;
    private final boolean pipeline;
    private volatile String lastFailure;

    public Zigbee2MqttAdapter(JdbcTemplate jdbc, DeviceProfiles profiles, ConfirmedPublisher publisher,
                              String readingsExchange, String baseTopic, MeterRegistry meters, OneInstance leadership,
                              boolean pipeline) {
        this.leadership = leadership;
        this.pipeline = pipeline;
        this.jdbc = jdbc;
        this.profiles = profiles;
        this.publisher = publisher;
        this.readingsExchange = readingsExchange;
        this.baseTopic = baseTopic;
        this.outcomes = Map.of("reading", outcome(meters, "reading"), "unknown_device", outcome(meters, "unknown_device"),
                "no_door", outcome(meters, "no_door"), "not_json", outcome(meters, "not_json"),
                "health_left_out", outcome(meters, "health_left_out"), "retained", outcome(meters, "retained"));
    }

    /**
     * Runs the adapter on the one instance that leads (an instance without the pipeline never does): started while
     * this instance leads, its broker reached or tried again at the next period (so a broker away at the service's
     * start stops nothing else); stopped when another instance has taken the lead.
     */
    public void leadOrFollow(Exchange exchange) {
        org.apache.camel.spi.RouteController routes = exchange.getContext().getRouteController();
        org.apache.camel.ServiceStatus status = routes.getRouteStatus(ROUTE);
        if (status == null || status.isStarting() || status.isStopping()) {
            return;
        }
        boolean leads = pipeline && leadership.leads();
        try {
            if (leads && !status.isStarted()) {
                routes.startRoute(ROUTE);
                // (while Camel itself still starts, the route's start waits for it: said at the next period)
                if (routes.getRouteStatus(ROUTE).isStarted()) {
                    log.info("Zigbee2MQTT adapter: this instance takes its broker's messages");
                    lastFailure = null;
                }
            } else if (!leads && status.isStarted()) {
                routes.stopRoute(ROUTE);
                log.info("Zigbee2MQTT adapter: stopped here, another instance leads (or the database is away)");
            }
        } catch (Exception e) {
            String reason = e.getMessage();
            if (!java.util.Objects.equals(reason, lastFailure)) {
                log.info("Zigbee2MQTT adapter: its broker could not be reached yet, trying again: {}", reason);
                lastFailure = reason;
            }
        }
    }

    private static Counter outcome(MeterRegistry meters, String outcome) {
        return Counter.builder("lockwatch.adapter.messages").description("device messages an adapter took, by what they were")
                .tag("adapter", NAME).tag("outcome", outcome).register(meters);
    }

    /** The reading a device's message says, addressed to the readings exchange; null when it says none. */
    public Outgoing readingOf(Exchange exchange) {
        if (exchange.getMessage() instanceof org.apache.camel.component.paho.PahoMessage paho
                && paho.getMqttMessage() != null && paho.getMqttMessage().isRetained()) {
            // a state kept by the broker from before, not news: taken now, it would make a dead device look alive
            return none("retained");
        }
        String topic = exchange.getMessage().getHeader(PahoConstants.MQTT_TOPIC, String.class);
        String device = topic == null || !topic.startsWith(baseTopic + "/") ? null : topic.substring(baseTopic.length() + 1);
        if (device == null || device.equals("bridge") || device.startsWith("bridge/")) {
            return none("unknown_device");
        }
        JsonNode state;
        try {
            state = JSON.readTree(exchange.getMessage().getBody(byte[].class));
        } catch (java.io.IOException e) {
            state = null;
        }
        if (state == null || !state.isObject()) {
            return none("not_json");
        }
        List<Map<String, Object>> sensors = jdbc.queryForList("""
                SELECT id, profile FROM sensors WHERE device_id = ? AND profile = ANY (?)""",
                device, profiles.of(NAME).toArray(String[]::new));
        if (sensors.isEmpty()) {
            return none("unknown_device");
        }
        String sensor = (String) sensors.get(0).get("id");
        DeviceProfiles.Profile profile = profiles.profile((String) sensors.get(0).get("profile"));
        Integer door = door(state.get(profile.doorField()), profile);
        if (door == null) {
            return none("no_door");
        }
        ObjectNode reading = JSON.createObjectNode().put("sensor_id", sensor).put("data", door)
                .put("ts", System.currentTimeMillis());
        JsonNode battery = profile.batteryField() == null ? null : state.get(profile.batteryField());
        if (battery != null && !battery.isNull()) {
            if (battery.isNumber() && battery.asDouble() >= 0 && battery.asDouble() <= 100) {
                reading.set("battery", battery);
            } else {
                outcomes.get("health_left_out").increment();
            }
        }
        JsonNode tamper = profile.tamperField() == null ? null : state.get(profile.tamperField());
        if (tamper != null && !tamper.isNull()) {
            if (tamper.isBoolean()) {
                reading.set("tamper", tamper);
            } else {
                outcomes.get("health_left_out").increment();
            }
        }
        outcomes.get("reading").increment();
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
        return new Outgoing(readingsExchange, "lockwatch.readings." + sensor,
                new Message(reading.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8), properties));
    }

    /** Its lead given up as the service stops (Spring's destroy method), so that another instance takes over at once. */
    public void close() {
        leadership.close();
    }

    /** Published to the readings exchange and confirmed before the step returns: only then is the message taken. */
    public void publish(Outgoing reading) {
        publisher.publish(List.of(reading), CONFIRM_WITHIN);
    }

    private Outgoing none(String outcome) {
        outcomes.get(outcome).increment();
        return null;
    }

    /** 1 (closed) or 0 (open) as the profile reads the field; null for anything else. */
    private static Integer door(JsonNode field, DeviceProfiles.Profile profile) {
        if (field == null || field.isNull() || field.isContainerNode()) {
            return null;
        }
        String value = field.isTextual() ? field.asText() : field.toString();
        return value.equals(profile.closedWhen()) ? Integer.valueOf(1) : value.equals(profile.openWhen()) ? Integer.valueOf(0) : null;
    }
}
