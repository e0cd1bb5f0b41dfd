package io.lockwatch.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Bad messages of every kind the service must park, each with the reason it must give
 * ({@code lockwatch_readings_invalid_total{reason}}): {@link #next()} cycles through them, with a body near the broker's limit (128 KiB)
 * every {@value #HUGE_EVERY}th message.
 */
final class MalformedCorpus {

    static final int HUGE_EVERY = 5000;
    /** Over max-body, and as large as the broker takes (max_message_size, scripts/services.sh). */
    private static final int HUGE_BYTES = 128 * 1024 - 1024;

    private record Kind(String reason, byte[] body) {
    }

    private final List<Kind> kinds = new ArrayList<>();
    private final Kind huge;
    private final Map<String, Long> expected = new LinkedHashMap<>();
    private long produced;

    MalformedCorpus() {
        String id = Reference.sensorId(0);
        add("malformed_json", "");
        add("malformed_json", "not json at all");
        add("malformed_json", "{\"sensor_id\":\"" + id + "\",\"data\":");
        add("malformed_json", "{\"sensor_id\":\"" + id + "\",\"sensor_id\":\"" + id + "\",\"data\":1}");
        byte[] badUtf8 = "{\"sensor_id\":\"B\u0001\u0002\",\"data\":1}".getBytes(StandardCharsets.US_ASCII);
        badUtf8[15] = (byte) 0xff; // not UTF-8 at all
        badUtf8[16] = (byte) 0xfe;
        kinds.add(new Kind("malformed_json", badUtf8));
        // (an array of readings is a gateway's message, valid since issue 17: not in this corpus)
        add("not_an_object", "\"door\"");
        add("not_an_object", "42");
        add("missing_sensor_id", "{\"data\":1}");
        add("invalid_sensor_id", "{\"sensor_id\":\"ThisIdIsWayTooLong17\",\"data\":1}");
        add("invalid_sensor_id", "{\"sensor_id\":\"bad-id!\",\"data\":1}");
        add("invalid_sensor_id", "{\"sensor_id\":12345,\"data\":1}");
        add("invalid_sensor_id", "{\"sensor_id\":\"\",\"data\":1}");
        add("missing_data", "{\"sensor_id\":\"" + id + "\"}");
        add("invalid_data", "{\"sensor_id\":\"" + id + "\",\"data\":2}");
        add("invalid_data", "{\"sensor_id\":\"" + id + "\",\"data\":\"1\"}");
        add("invalid_data", "{\"sensor_id\":\"" + id + "\",\"data\":true}");
        add("invalid_ts", "{\"sensor_id\":\"" + id + "\",\"data\":1,\"ts\":\"yesterday\"}");
        add("ts_in_future", "{\"sensor_id\":\"" + id + "\",\"data\":1,\"ts\":" + (System.currentTimeMillis() + 86_400_000L * 365) + "}");
        add("invalid_message_id", "{\"sensor_id\":\"" + id + "\",\"data\":1,\"message_id\":\"\"}");
        char[] padding = new char[5000];
        Arrays.fill(padding, ' ');
        add("body_too_large", "{\"sensor_id\":\"" + id + "\",\"data\":1}" + new String(padding));
        byte[] big = new byte[HUGE_BYTES];
        Arrays.fill(big, (byte) 'x');
        huge = new Kind("body_too_large", big);
    }

    private void add(String reason, String body) {
        kinds.add(new Kind(reason, body.getBytes(StandardCharsets.UTF_8)));
    }

    /** The next bad message; its reason is counted in {@link #expected()}. */
    ReadingSource.Message next() {
        produced++;
        Kind k = produced % HUGE_EVERY == 0 ? huge : kinds.get((int) (produced % kinds.size()));
        expected.merge(k.reason(), 1L, Long::sum);
        return new ReadingSource.Message("malformed", k.body());
    }

    /** How many of each reason were produced so far. */
    Map<String, Long> expected() {
        return expected;
    }

    int kinds() {
        return kinds.size() + 1;
    }
}
