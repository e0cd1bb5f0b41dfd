package io.lockwatch.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;

/**
 * ChirpStack v4's uplink events as readings: an event on {@code application/<id>/device/<devEui>/event/up} (its MQTT
 * integration, JSON) is read by the profile of the sensor whose {@code device_id} is that DevEUI (16 hex digits, in
 * lower case as ChirpStack writes it), from the payload its codec decoded ({@code object}); an uplink without one
 * (no codec, or not a state frame) is no reading.
 * <p>
 * LoRaWAN repeats an uplink: ChirpStack folds the copies several gateways heard into one event, and a device may
 * send a frame again. The reading's {@code message_id} is the DevEUI, the session's DevAddr, the frame counter
 * {@code fCnt} and a hash of the frame's payload, so a frame sent again is a duplicate; a device that joins again gets
 * a new DevAddr and counts from 0 again, and its frames are new ones, never taken for repeats (nor, with its payload
 * in the id, those of a device on ABP whose counter was reset). The reading's time is the event's
 * {@code time} (when the network heard it, never later than now), so frames that arrive out of order are applied in
 * the order they were sent: one older than the sensor's newest is stale. Its signal is the best gateway's RSSI and
 * SNR.
 */
public class ChirpStackAdapter extends NetworkAdapter {

    public static final String NAME = "chirpstack";
    private static final long MEANINGFUL_SINCE = java.time.Instant.parse("2015-01-01T00:00:00Z").toEpochMilli();

    ChirpStackAdapter(AdapterServices services, NetworkSubscription.Settings subscription) {
        super(NAME, "ChirpStack", services, subscription);
    }

    @Override
    Outgoing readingOf(NetworkMessage message) {
        if (retained(message)) {
            return none("retained");
        }
        String topic = message.topic();
        String[] levels = topic == null ? new String[0] : topic.split("/");
        if (levels.length != 6 || !levels[0].equals("application") || !levels[2].equals("device")
                || !levels[4].equals("event") || !levels[5].equals("up")) {
            return none("unknown_device");
        }
        String devEui = levels[3].toLowerCase(java.util.Locale.ROOT);
        JsonNode event = object(message);
        if (event == null) {
            return none("not_json");
        }
        JsonNode state = event.get("object");
        if (state == null || !state.isObject()) {
            return none("no_door");
        }
        Long heardAt = null;
        if (event.hasNonNull("time")) {
            try {
                heardAt = java.time.Instant.parse(event.get("time").asText()).toEpochMilli();
            } catch (java.time.format.DateTimeParseException e) {
                heardAt = null;
            }
        }
        // a gateway whose clock never was set says 1970: no time at all, rather than a reading ingest would refuse
        if (heardAt != null && heardAt < MEANINGFUL_SINCE) {
            heardAt = null;
        }
        // a frame sent again is the same bytes; after a counter reset the session may keep its DevAddr (ABP with the
        // counter's check off), and a new frame of the same count is told apart by its payload
        String messageId = event.hasNonNull("fCnt")
                ? devEui + ":" + event.path("devAddr").asText("") + ":" + event.get("fCnt").asLong() + ":"
                  + Integer.toHexString(event.path("data").asText("").hashCode()) : null;
        Integer rssi = null;
        Double snr = null;
        for (JsonNode rx : event.path("rxInfo")) {
            if (rx.hasNonNull("rssi") && (rssi == null || rx.get("rssi").asInt() > rssi)) {
                rssi = rx.get("rssi").asInt();
                snr = rx.hasNonNull("snr") ? rx.get("snr").asDouble() : null;
            }
        }
        return reading(devEui, state, heardAt, messageId, rssi, snr);
    }
}
