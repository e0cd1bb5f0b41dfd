package io.lockwatch.bench;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Generates readings as sensors send them, {@code {"sensor_id":"...","data":0|1,"ts":<epoch ms>}}, routing
 * key = sensor id, and records each in the {@link Reference}. A reading picks a random sensor and flips its
 * data with probability {@code changes}, otherwise repeats it; measured times increase strictly per sensor.
 */
final class ReadingSource {

    /** One message to publish. */
    record Message(String routingKey, byte[] body) {
    }

    private final Reference reference;
    private final double changes;
    private final SplittableRandom random;

    ReadingSource(Reference reference, double changes, long seed) {
        this.reference = reference;
        this.changes = changes;
        this.random = new SplittableRandom(seed);
    }

    Reference reference() {
        return reference;
    }

    /** The first reading of a sensor (a change from nothing), with random data. */
    Message first(int sensor) {
        return reading(sensor, random.nextInt(2));
    }

    /**
     * The first reading of a sensor, with random data, measured at the given time (so that many sensors can
     * report at one moment).
     */
    Message first(int sensor, long measuredAtMillis) {
        return reading(sensor, random.nextInt(2), measuredAtMillis);
    }

    /** The first reading of a sensor, with the given data, measured at the given time. */
    Message first(int sensor, long measuredAtMillis, int data) {
        return reading(sensor, data, measuredAtMillis);
    }

    /** A reading of the given sensor with the given data, measured now. */
    Message next(int sensor, int data) {
        return reading(sensor, data);
    }

    /** A reading of a random sensor: its data flipped with probability {@code changes}, else repeated. */
    Message next() {
        return next(random.nextInt(reference.sensors()));
    }

    /** A reading of the given sensor: its data flipped with probability {@code changes}, else repeated. */
    Message next(int sensor) {
        int last = reference.lastData(sensor);
        int data;
        if (last < 0) {
            data = random.nextInt(2);
        } else {
            data = random.nextDouble() < changes ? 1 - last : last;
        }
        return reading(sensor, data);
    }

    /** Every sensor once, in random order. */
    int[] shuffledSensors() {
        int[] order = new int[reference.sensors()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private Message reading(int sensor, int data) {
        return reading(sensor, data, System.currentTimeMillis());
    }

    private Message reading(int sensor, int data, long nowMillis) {
        String id = reference.id(sensor);
        long ts = reference.nextTs(sensor, nowMillis);
        reference.published(sensor, data, ts);
        return message(id, data, ts);
    }

    /** The message of one reading, routed by its sensor id; the reference does not see it. */
    static Message message(String sensorId, int data, long ts) {
        String json = "{\"sensor_id\":\"" + sensorId + "\",\"data\":" + data + ",\"ts\":" + ts + "}";
        return new Message(sensorId, json.getBytes(StandardCharsets.US_ASCII));
    }

    /** One message holding several readings as a JSON array (a gateway's), routed by its first sensor's id. */
    static Message array(java.util.List<Message> readings) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(readings.size() * 64);
        out.write('[');
        for (int i = 0; i < readings.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            out.writeBytes(readings.get(i).body());
        }
        out.write(']');
        return new Message(readings.get(0).routingKey(), out.toByteArray());
    }
}
