package io.lockwatch.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;

/**
 * Zigbee2MQTT's device messages as readings: a message on {@code <base-topic>/<friendly name>} (slashes allowed) is
 * the JSON object of a device's state, read by the profile of the sensor whose {@code device_id} is that friendly
 * name. The bridge's own topics, other devices' messages (lights, plugs), a state without its door, what is no JSON
 * object and a state the broker retained from before are no readings. Zigbee2MQTT says no time and no id of its own:
 * the reading's time is when the adapter took it.
 */
public class Zigbee2MqttAdapter extends NetworkAdapter {

    public static final String NAME = "zigbee2mqtt";

    private final String baseTopic;

    Zigbee2MqttAdapter(AdapterServices services, NetworkSubscription.Settings subscription, String baseTopic) {
        super(NAME, "Zigbee2MQTT", services, subscription);
        this.baseTopic = baseTopic;
    }

    @Override
    Outgoing readingOf(NetworkMessage message) {
        if (retained(message)) {
            return none("retained");
        }
        String topic = message.topic();
        String device = topic == null || !topic.startsWith(baseTopic + "/") ? null : topic.substring(baseTopic.length() + 1);
        if (device == null || device.equals("bridge") || device.startsWith("bridge/")) {
            return none("unknown_device");
        }
        JsonNode state = object(message);
        return state == null ? none("not_json") : reading(device, state, null, null, null, null);
    }
}
