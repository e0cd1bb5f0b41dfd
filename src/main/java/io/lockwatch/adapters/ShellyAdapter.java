package io.lockwatch.adapters;

import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import org.apache.camel.Exchange;
import org.apache.camel.component.paho.PahoConstants;

/**
 * Shelly's first-generation Door/Window sensors as readings: each says one value on a topic of its own,
 * {@code shellies/<id>/sensor/<name>} (its {@code state}, {@code open} or {@code close}; its {@code battery} in percent;
 * its {@code tilt}, {@code vibration}, {@code lux}, ...), all of them each time it wakes up. The adapter keeps the
 * latest of each device's values ({@value #DEVICES_KEPT} devices at most, for a day) and reads a {@code state} message,
 * with the values kept beside it, by the profile of the sensor whose {@code device_id} is the device's MQTT id
 * ({@code shellydw2-483FDA81E731}); a value without the door is kept for the device's next state. A text that is a
 * number is taken as one, so a profile reads {@code battery} as any other adapter's. Shelly says no time and no id
 * of its own: the reading's time is when the adapter took it.
 */
public class ShellyAdapter extends NetworkAdapter {

    public static final String NAME = "shelly";
    static final int DEVICES_KEPT = 100_000;

    /** Each device's latest values by name, the door's among them. */
    private final Cache<String, ObjectNode> devices = Caffeine.newBuilder().maximumSize(DEVICES_KEPT)
            .expireAfterWrite(Duration.ofDays(1)).build();

    ShellyAdapter(AdapterServices services) {
        super(NAME, "Shelly", services);
    }

    @Override
    public Outgoing readingOf(Exchange exchange) {
        if (retained(exchange)) {
            return none("retained");
        }
        String topic = exchange.getMessage().getHeader(PahoConstants.MQTT_TOPIC, String.class);
        String[] levels = topic == null ? new String[0] : topic.split("/");
        if (levels.length != 4 || !levels[0].equals("shellies") || !levels[2].equals("sensor")) {
            return none("unknown_device");
        }
        String device = levels[1];
        String name = levels[3];
        String text = exchange.getMessage().getBody(String.class);
        JsonNode value = valueOf(text == null ? "" : text.trim());
        ObjectNode state = devices.get(device, d -> JsonNodeFactory.instance.objectNode());
        ObjectNode said;
        synchronized (state) {
            state.set(name, value);
            said = state.deepCopy();
        }
        if (!name.equals("state")) {
            return none("no_door");
        }
        return reading(device, said, null, null, null, null);
    }

    /** A Shelly's value: a number as a number, anything else as its text. */
    private static JsonNode valueOf(String text) {
        try {
            return JsonNodeFactory.instance.numberNode(new java.math.BigDecimal(text));
        } catch (NumberFormatException notANumber) {
            return JsonNodeFactory.instance.textNode(text);
        }
    }
}
