package io.lockwatch.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.paho.client.mqttv3.IMqttActionListener;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * Publishes readings as a LoRaWAN network does (issue 57's benchmark): each reading becomes a ChirpStack v4 uplink
 * event of the sensor's device (a Dragino LDS02: {@code DOOR_OPEN_STATUS} 1 is open; DevEUI {@link #devEui}), heard
 * by two gateways, its frame counter the device's next, its time the reading's; and each event is published
 * {@value #COPIES} times, as a frame that reaches the adapter twice (a network server's retry, two regions forwarding
 * it): every second copy must be a duplicate. QoS 1 to the network's broker (Mosquitto, scripts/services.sh), at
 * most a window of unacknowledged publishes at a time.
 */
final class LoRaWanPublisher implements ReadingPublisher {

    static final int COPIES = 2;
    static final String BROKER = "tcp://127.0.0.1:1884", USER = "zigbee2mqtt", PASSWORD = "zigbee2mqtt";
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final MqttAsyncClient client;
    private final int maxOutstanding;
    private final Semaphore window;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    /** Each device's last frame counter (one publishing thread). */
    private final Map<String, Integer> frames = new HashMap<>();
    private final IMqttActionListener settle = new IMqttActionListener() {
        @Override
        public void onSuccess(IMqttToken token) {
            window.release();
        }

        @Override
        public void onFailure(IMqttToken token, Throwable cause) {
            failed.incrementAndGet();
            window.release();
        }
    };

    LoRaWanPublisher(int maxOutstanding) throws MqttException {
        this.maxOutstanding = maxOutstanding;
        this.window = new Semaphore(maxOutstanding);
        this.client = new MqttAsyncClient(BROKER, "lockwatch-bench-lorawan-" + System.nanoTime(), new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setMaxInflight(maxOutstanding);
        options.setUserName(USER);
        options.setPassword(PASSWORD.toCharArray());
        client.connect(options).waitForCompletion(ACK_TIMEOUT.toMillis());
    }

    /** The DevEUI of the bench's sensor: its id's hex digits, 16 of them (BenchDatabase.nameDevices). */
    static String devEui(String sensorId) {
        return "000000" + sensorId.substring(1).toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public void publish(ReadingSource.Message message) throws IOException, InterruptedException {
        JsonNode reading = JSON.readTree(message.body());
        String sensor = reading.get("sensor_id").asText();
        String devEui = devEui(sensor);
        int fCnt = frames.merge(devEui, 1, Integer::sum);
        String time = Instant.ofEpochMilli(reading.get("ts").asLong()).toString();
        int open = reading.get("data").asInt() == 0 ? 1 : 0;
        String payload = java.util.Base64.getEncoder().encodeToString(new byte[] {(byte) open, (byte) fCnt, (byte) (fCnt >> 8)});
        byte[] event = ("{\"deduplicationId\":\"" + java.util.UUID.randomUUID() + "\",\"time\":\"" + time + "\","
                + "\"deviceInfo\":{\"tenantId\":\"52f14cd4-c6f1-4fbd-8f87-4025e1d49242\",\"applicationId\":"
                + "\"17c82e96-be03-4f38-aef3-f83d48582d97\",\"deviceProfileName\":\"dragino-lds02\",\"devEui\":\"" + devEui
                + "\"},\"devAddr\":\"01ab2f5c\",\"adr\":true,\"dr\":5,\"fCnt\":" + fCnt + ",\"fPort\":10,\"confirmed\":false,"
                + "\"data\":\"" + payload + "\",\"object\":{\"DOOR_OPEN_STATUS\":" + open + ".0,\"BAT_V\":3.05},"
                + "\"rxInfo\":[{\"gatewayId\":\"0016c001ff10a235\",\"rssi\":-112,\"snr\":-4.2},"
                + "{\"gatewayId\":\"0016c001ff10a236\",\"rssi\":-87,\"snr\":7.5}]}").getBytes(StandardCharsets.UTF_8);
        String topic = "application/17c82e96-be03-4f38-aef3-f83d48582d97/device/" + devEui + "/event/up";
        for (int copy = 0; copy < COPIES; copy++) {
            if (!window.tryAcquire(ACK_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IOException("no PUBACK from the network's broker for " + ACK_TIMEOUT.toSeconds() + " s");
            }
            MqttMessage m = new MqttMessage(event);
            m.setQos(1);
            try {
                client.publish(topic, m, null, settle);
            } catch (MqttException e) {
                window.release();
                throw new IOException("MQTT publish failed: " + e, e);
            }
            published.incrementAndGet();
        }
    }

    @Override
    public void awaitConfirms() throws IOException, InterruptedException {
        if (!window.tryAcquire(maxOutstanding, ACK_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException((maxOutstanding - window.availablePermits()) + " publishes still unacknowledged after "
                    + ACK_TIMEOUT.toSeconds() + " s");
        }
        window.release(maxOutstanding);
    }

    /** MQTT messages published: {@value #COPIES} a reading. */
    @Override
    public long published() {
        return published.get();
    }

    @Override
    public long nacked() {
        return failed.get();
    }

    @Override
    public void close() throws MqttException {
        client.disconnect().waitForCompletion(ACK_TIMEOUT.toMillis());
        client.close();
    }
}
