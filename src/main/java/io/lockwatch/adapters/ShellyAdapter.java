package io.lockwatch.adapters;

import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;

/**
 * Shelly's first-generation Door/Window sensors as readings: each says one value on a topic of its own,
 * {@code shellies/<id>/sensor/<name>} (its {@code state}, {@code open} or {@code close}; its {@code battery} in percent;
 * its {@code tilt}, {@code vibration}, {@code lux}, ...), all of them each time it wakes up. For a device registered
 * with a sensor (its MQTT id, {@code shellydw2-483FDA81E731}, the sensor's {@code device_id}), the adapter keeps the
 * latest of the values its profile reads (door, battery, tamper; up to {@value #DEVICES_KEPT} devices, each until a
 * day without a message) and reads a {@code state} message, with the values kept beside it, by that profile; a
 * value without the door waits for the device's next state. Another device's messages are not kept: whoever may
 * publish on the broker cannot fill the adapter's memory. A text that is a number is taken as one, so a profile
 * reads {@code battery} as any other adapter's. Shelly says no time and no id of its own: the reading's time is when
 * the adapter took it.
 */
public class ShellyAdapter extends NetworkAdapter {

    public static final String NAME = "shelly";
    static final int DEVICES_KEPT = 100_000;
    /** A value longer than any a Door/Window says is not kept. */
    private static final int LONGEST_VALUE = 64;

    /** Each registered device's latest values the profile reads, by field. */
    private final Cache<String, ObjectNode> devices = Caffeine.newBuilder().maximumSize(DEVICES_KEPT)
            .expireAfterAccess(Duration.ofDays(1)).build();

    ShellyAdapter(AdapterServices services, NetworkSubscription.Settings subscription) {
        super(NAME, "Shelly", services, subscription);
    }

    @Override
    Outgoing readingOf(NetworkMessage message) {
        if (retained(message)) {
            return none("retained");
        }
        String topic = message.topic();
        String[] levels = topic == null ? new String[0] : topic.split("/");
        if (levels.length != 4 || !levels[0].equals("shellies") || !levels[2].equals("sensor")) {
            return none("unknown_device");
        }
        String device = levels[1];
        String name = levels[3];
        Registered sensor = registered(device);
        if (sensor == null) {
            return none("unknown_device");
        }
        DeviceProfiles.Profile profile = sensor.profile();
        if (!name.equals(profile.doorField()) && !name.equals(profile.batteryField()) && !name.equals(profile.tamperField())) {
            return none("no_door");
        }
        String text = message.text();
        if (text == null || text.length() > LONGEST_VALUE) {
            return none("health_left_out");
        }
        ObjectNode state = devices.get(device, d -> JsonNodeFactory.instance.objectNode());
        ObjectNode said;
        synchronized (state) {
            state.set(name, valueOf(text.trim()));
            said = state.deepCopy();
        }
        if (!name.equals(profile.doorField())) {
            return none("no_door");
        }
        return reading(sensor, said, null, null, null, null);
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
