package io.lockwatch.adapters;

import java.nio.charset.StandardCharsets;

/**
 * One message of a network's broker, as it arrived.
 *
 * @param retained whether the broker kept it from before (no news)
 * @param id       its MQTT packet id, by which it is acknowledged
 * @param qos      the quality of service it came with (0: nothing to acknowledge)
 */
record NetworkMessage(String topic, byte[] payload, boolean retained, int id, int qos) {

    String text() {
        return new String(payload, StandardCharsets.UTF_8);
    }
}
