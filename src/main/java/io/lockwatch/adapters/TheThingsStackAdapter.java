package io.lockwatch.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;

/**
 * The Things Stack v3's uplink messages as readings: a message on {@code v3/<application>[@<tenant>]/devices/<id>/up}
 * (its MQTT server, JSON) is read by the profile of the sensor whose {@code device_id} is the device's DevEUI
 * ({@code end_device_ids.dev_eui}, kept in lower case as every LoRaWAN adapter keeps it), from the payload its
 * codec decoded ({@code uplink_message.decoded_payload}); an uplink without one is no reading.
 * <p>
 * The Things Stack folds the copies several gateways heard into one uplink and forwards no retransmission of a
 * frame; a frame that still comes twice (a reconnection, a webhook's retry) is a duplicate by the reading's
 * {@code message_id}: the DevEUI, the session's key id (a new one at each join, when the counter starts again at 0),
 * the frame counter {@code f_cnt} (left out when 0, as The Things Stack leaves out every zero) and a hash of the
 * frame's payload (an ABP device whose counter was reset keeps its session). The reading's time is when the Network
 * Server took the frame ({@code uplink_message.received_at}, one clock for every gateway, never later than now), so
 * frames that arrive out of order are applied in the order they were sent. Its signal is the best gateway's RSSI
 * and SNR. An uplink simulated in the stack's console is not the device's: counted, and no reading. Its webhooks'
 * uplinks (the same JSON) are read the same way ({@link #uplink}, {@code POST /adapters/the-things-stack/uplinks}).
 */
public class TheThingsStackAdapter extends NetworkAdapter {

    public static final String NAME = "the-things-stack";

    TheThingsStackAdapter(AdapterServices services, NetworkSubscription.Settings subscription) {
        super(NAME, "The Things Stack", services, subscription);
    }

    @Override
    Outgoing readingOf(NetworkMessage message) {
        if (retained(message)) {
            return none("retained");
        }
        String topic = message.topic();
        String[] levels = topic == null ? new String[0] : topic.split("/");
        if (levels.length != 5 || !levels[0].equals("v3") || !levels[2].equals("devices") || !levels[4].equals("up")) {
            return none("unknown_device");
        }
        JsonNode uplink = object(message);
        if (uplink == null) {
            return none("not_json");
        }
        return uplink(uplink);
    }

    /**
     * The reading an uplink message says, from the MQTT server or a webhook (the same JSON); null (counted) when it
     * says none.
     */
    public Outgoing uplink(JsonNode message) {
        // an uplink an operator simulated in the stack's console: not the device speaking for itself
        if (message.path("simulated").asBoolean(false)) {
            return none("simulated");
        }
        String devEui = message.path("end_device_ids").path("dev_eui").asText("").toLowerCase(java.util.Locale.ROOT);
        if (devEui.isEmpty()) {
            return none("unknown_device");
        }
        JsonNode uplink = message.path("uplink_message");
        JsonNode state = uplink.get("decoded_payload");
        if (state == null || !state.isObject()) {
            return none("no_door");
        }
        Long heardAt = instant(uplink.path("received_at"));
        if (heardAt == null) {
            heardAt = instant(message.path("received_at"));
        }
        String session = uplink.path("session_key_id").asText(message.path("end_device_ids").path("dev_addr").asText(""));
        String messageId = devEui + ":" + session + ":" + uplink.path("f_cnt").asLong(0) + ":"
                + Integer.toHexString(uplink.path("frm_payload").asText("").hashCode());
        Integer rssi = null;
        Double snr = null;
        for (JsonNode rx : uplink.path("rx_metadata")) {
            JsonNode r = rx.hasNonNull("rssi") ? rx.get("rssi") : rx.get("channel_rssi");
            if (r != null && r.isNumber() && (rssi == null || r.asInt() > rssi)) {
                rssi = r.asInt();
                snr = rx.hasNonNull("snr") ? rx.get("snr").asDouble() : null;
            }
        }
        return reading(devEui, state, heardAt, messageId, rssi, snr);
    }

    /** An RFC 3339 time (nanoseconds allowed), or null. */
    private static Long instant(JsonNode time) {
        if (!time.isTextual()) {
            return null;
        }
        try {
            return java.time.Instant.parse(time.asText()).toEpochMilli();
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }
}
