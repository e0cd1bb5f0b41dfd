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
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What every network's adapter does ({@code routes/adapters.camel.yaml}): finds the sensor registered with a device
 * under a profile of this adapter (and no other sensor: whoever may publish on the network's broker reports only for
 * the sensors registered with its devices), reads the device's state by that profile (its door by its closed and open
 * values; its battery and tamper switch, a value out of range left out so that the door still counts), and publishes
 * the sensor's v1 reading to the readings exchange, confirmed before the network's broker is answered
 * ({@link NetworkSubscription}: a batch of what has arrived at a time, in order). What is no reading is counted by its
 * outcome and left alone. The adapter runs on one instance at a time ({@link OneInstance}).
 */
public abstract class NetworkAdapter {

    private static final Duration CONFIRM_WITHIN = Duration.ofSeconds(10);
    static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> OUTCOMES = List.of("reading", "unknown_device", "no_door", "not_json",
            "health_left_out", "retained", "simulated", "defect");

    private final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(getClass());
    private final String name;
    private final String route;
    private final String title;
    private final JdbcTemplate jdbc;
    private final DeviceProfiles profiles;
    private final ConfirmedPublisher publisher;
    private final String readingsExchange;
    private final Map<String, Counter> outcomes;
    private final OneInstance leadership;
    private final boolean pipeline;
    private final NetworkSubscription.Settings subscription;
    private volatile NetworkSubscription subscribed;
    private volatile String lastFailure;

    NetworkAdapter(String name, String title, AdapterServices services, NetworkSubscription.Settings subscription) {
        this.name = name;
        this.title = title;
        this.subscription = subscription;
        this.route = "direct:" + name + "-messages";
        this.jdbc = services.jdbc();
        this.profiles = services.profiles();
        this.publisher = services.publisher();
        this.readingsExchange = services.readingsExchange();
        this.pipeline = services.pipeline();
        this.leadership = new OneInstance(jdbc.getDataSource(), name);
        java.util.Map<String, Counter> counters = new java.util.HashMap<>();
        for (String outcome : OUTCOMES) {
            counters.put(outcome, Counter.builder("lockwatch.adapter.messages")
                    .description("device messages an adapter took, by what they were")
                    .tag("adapter", name).tag("outcome", outcome).register(services.meters()));
        }
        this.outcomes = Map.copyOf(counters);
    }

    /** What an adapter needs of the service. */
    record AdapterServices(JdbcTemplate jdbc, DeviceProfiles profiles, ConfirmedPublisher publisher,
                           String readingsExchange, MeterRegistry meters, boolean pipeline) {
    }

    /** The reading a device's message says, addressed to the readings exchange; null (counted) when it says none. */
    abstract Outgoing readingOf(NetworkMessage message);

    /**
     * The readings a batch of the network's messages says, in their order. A message that cannot be read for a fault
     * of the service (not of its database: that is waited out) is logged and counted, and the rest are read.
     */
    public List<Outgoing> readingsOf(List<NetworkMessage> batch) {
        List<Outgoing> readings = new java.util.ArrayList<>(batch.size());
        for (NetworkMessage m : batch) {
            Outgoing reading;
            try {
                reading = readingOf(m);
            } catch (RuntimeException e) {
                if (io.lockwatch.infra.errors.ServicesAway.causedBy(e)) {
                    throw e;
                }
                log.error("{} adapter: a message on {} could not be read", title, m.topic(), e);
                outcomes.get("defect").increment();
                continue;
            }
            if (reading != null) {
                readings.add(reading);
            }
        }
        return readings;
    }

    /**
     * Runs the adapter on the one instance that leads (an instance without the pipeline never does): subscribed while
     * this instance leads, its broker reached or tried again at the next period (so a broker away at the service's
     * start stops nothing else); unsubscribed when another instance has taken the lead.
     */
    public void leadOrFollow(Exchange exchange) {
        NetworkSubscription s = subscribed;
        if (s == null) {
            org.apache.camel.ProducerTemplate batches = exchange.getContext().createProducerTemplate();
            s = new NetworkSubscription(title, subscription, batch -> batches.sendBody(route, batch));
            subscribed = s;
        }
        if (s.broken()) {
            s.stop(); // (its connection said why it ended)
        }
        boolean leads = pipeline && leadership.leads();
        try {
            if (leads && !s.running()) {
                s.start();
                log.info("{} adapter: this instance takes its broker's messages", title);
                lastFailure = null;
            } else if (!leads && s.running()) {
                s.stop();
                log.info("{} adapter: stopped here, another instance leads (or the database is away)", title);
            }
        } catch (Exception e) {
            String reason = e.getMessage();
            if (!java.util.Objects.equals(reason, lastFailure)) {
                log.info("{} adapter: its broker could not be reached yet, trying again: {}", title, reason);
                lastFailure = reason;
            }
        }
    }

    /** Whether it takes its broker's messages here now. */
    boolean connected() {
        NetworkSubscription s = subscribed;
        return s != null && s.connected();
    }

    /** Published to the readings exchange and confirmed before the step returns: only then are the messages taken. */
    public void publish(List<Outgoing> readings) {
        if (!readings.isEmpty()) {
            publisher.publish(readings, CONFIRM_WITHIN);
        }
    }

    /** Its lead given up as the service stops (Spring's destroy method), so that another instance takes over at once. */
    public void close() {
        NetworkSubscription s = subscribed;
        if (s != null) {
            s.stop();
        }
        leadership.close();
    }

    /** A message the broker retained from before: not news (taken now, it would make a dead device look alive). */
    static boolean retained(NetworkMessage message) {
        return message.retained();
    }

    /** The message's body as a JSON object, or null. */
    static JsonNode object(NetworkMessage message) {
        try {
            JsonNode node = JSON.readTree(message.payload());
            return node != null && node.isObject() ? node : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /**
     * The reading of the sensor registered with this device, as its profile reads the device's state; null (counted)
     * when there is none.
     *
     * @param measuredAt when the network says the device spoke (never later than now), or null: now
     * @param messageId  the network's own id of the message, by which a repeat of it is a duplicate; or null
     * @param rssi       the best gateway's signal, or null
     */
    Outgoing reading(String device, JsonNode state, Long measuredAt, String messageId, Integer rssi, Double snr) {
        Registered sensor = registered(device);
        return sensor == null ? none("unknown_device") : reading(sensor, state, measuredAt, messageId, rssi, snr);
    }

    /** The sensor registered with a device under a profile of this adapter, and that profile. */
    record Registered(String sensor, DeviceProfiles.Profile profile) {
    }

    /** The sensor registered with this device under a profile of this adapter, or null. */
    Registered registered(String device) {
        List<Map<String, Object>> sensors = jdbc.queryForList(
                "SELECT id, profile FROM sensors WHERE device_id = ? AND profile = ANY (?)",
                device, profiles.of(name).toArray(String[]::new));
        return sensors.isEmpty() ? null : new Registered((String) sensors.get(0).get("id"),
                profiles.profile((String) sensors.get(0).get("profile")));
    }

    /** The reading of this registered sensor, as its profile reads its device's state; null (counted) if none. */
    Outgoing reading(Registered registered, JsonNode state, Long measuredAt, String messageId, Integer rssi, Double snr) {
        String sensor = registered.sensor();
        DeviceProfiles.Profile profile = registered.profile();
        Integer door = valueOf(state.get(profile.doorField()), profile.closedWhen(), profile.openWhen());
        if (door == null) {
            return none("no_door");
        }
        long now = System.currentTimeMillis();
        ObjectNode reading = JSON.createObjectNode().put("sensor_id", sensor).put("data", door)
                .put("ts", measuredAt == null ? now : Math.min(measuredAt, now));
        if (messageId != null) {
            reading.put("message_id", messageId);
        }
        JsonNode battery = profile.batteryField() == null ? null : state.get(profile.batteryField());
        if (battery != null && !battery.isNull()) {
            double percent = battery.isNumber() ? profile.batteryPercent(battery.asDouble()) : Double.NaN;
            if (percent >= 0 && percent <= 100) {
                if (profile.batteryEmptyVolts() == null) {
                    reading.set("battery", battery);
                } else {
                    reading.put("battery", percent);
                }
            } else {
                outcomes.get("health_left_out").increment();
            }
        }
        JsonNode tamper = profile.tamperField() == null ? null : state.get(profile.tamperField());
        if (tamper != null && !tamper.isNull()) {
            Boolean tampered = profile.tamperWhen() == null ? (tamper.isBoolean() ? tamper.asBoolean() : null)
                    : tamper.isContainerNode() ? null : Boolean.valueOf(matches(tamper, profile.tamperWhen()));
            if (tampered != null) {
                reading.put("tamper", tampered);
            } else {
                outcomes.get("health_left_out").increment();
            }
        }
        if (rssi != null && rssi >= -200 && rssi <= 0) {
            reading.put("rssi", rssi);
            if (snr != null && snr >= -50 && snr <= 50) {
                reading.put("snr", snr);
            }
        }
        outcomes.get("reading").increment();
        MessageProperties properties = new MessageProperties();
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
        return new Outgoing(readingsExchange, "lockwatch.readings." + sensor,
                new Message(reading.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8), properties));
    }

    Outgoing none(String outcome) {
        outcomes.get(outcome).increment();
        return null;
    }

    /** 1 (closed) or 0 (open) as the profile reads the field; null for anything else. */
    private static Integer valueOf(JsonNode field, List<String> closedWhen, List<String> openWhen) {
        if (field == null || field.isNull() || field.isContainerNode()) {
            return null;
        }
        return matches(field, closedWhen) ? Integer.valueOf(1) : matches(field, openWhen) ? Integer.valueOf(0) : null;
    }

    /**
     * Whether a field has one of the profile's values: a string by its text, a boolean by {@code true}/{@code false},
     * a number by its value (ChirpStack's codecs' numbers come as doubles: 1.0 is the profile's 1).
     */
    private static boolean matches(JsonNode field, List<String> values) {
        for (String v : values) {
            if (field.isNumber()) {
                try {
                    if (field.decimalValue().compareTo(new java.math.BigDecimal(v)) == 0) {
                        return true;
                    }
                } catch (NumberFormatException notANumber) {
                    // the profile's value is text: no number matches it
                }
            } else if ((field.isTextual() ? field.asText() : field.toString()).equals(v)) {
                return true;
            }
        }
        return false;
    }
}
