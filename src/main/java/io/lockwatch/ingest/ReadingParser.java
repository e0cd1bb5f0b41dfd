package io.lockwatch.ingest;

import java.io.IOException;
import java.time.Instant;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.lockwatch.ingest.Reading.TimeSource;
import io.lockwatch.ingest.Rejection.Reason;

/**
 * Turns one message body (contract v1) into a {@link Reading} or a {@link Rejection} that says exactly what
 * is wrong; a body that is a JSON array of readings (a gateway's, as {@code POST /readings} takes it) into one of
 * those per element. Never throws for bad input.
 */
public class ReadingParser {

    public static final Pattern SENSOR_ID = Pattern.compile("^[0-9A-Za-z]{1,16}$");

    /** {@link #SENSOR_ID}'s rule without a regex engine: asked of every reading on ingest's path. */
    static boolean isSensorId(String s) {
        int n = s.length();
        if (n < 1 || n > 16) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')) {
                return false;
            }
        }
        return true;
    }
    static final int MESSAGE_ID_MAX = 128;
    /** Epoch values below this (March 1973) are almost surely seconds sent where milliseconds are expected. */
    static final long EPOCH_MILLIS_PLAUSIBLE = 100_000_000_000L;
    static final long EPOCH_MILLIS_MAX = 4_102_444_800_000L; // 2100-01-01

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    /** An array message holds at most this many readings, as {@code POST /readings} takes. */
    public static final int MAX_READINGS = 1000;
    /** Kept with a parked element of an array message: its place in the array, from 0. */
    public static final String INDEX_HEADER = "x-lockwatch-index";

    /** Reads one value where the parser stands; what follows it is the caller's. */
    private static final com.fasterxml.jackson.databind.ObjectReader IN_PLACE = JSON.reader()
            .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final long maxBodyBytes;
    private final long maxArrayBodyBytes;
    private final long maxClockSkewMillis;
    private final LongSupplier clock;

    public ReadingParser(long maxBodyBytes, long maxArrayBodyBytes, long maxClockSkewMillis, LongSupplier clock) {
        this.maxBodyBytes = maxBodyBytes;
        this.maxArrayBodyBytes = maxArrayBodyBytes;
        this.maxClockSkewMillis = maxClockSkewMillis;
        this.clock = clock;
    }

    /**
     * A message as ingest receives it: a reading, or an array of up to {@value #MAX_READINGS}, each judged on its own.
     * An element without a message id of its own takes the message's, with {@code #index} after it, so that a
     * redelivered array is told apart element by element.
     *
     * @return a {@link Reading}, a {@link Rejection}, or for an array a list of them in the array's order
     */
    public Object parseMessage(byte[] body, String amqpMessageId, Date amqpTimestamp,
                               Supplier<Map<String, Object>> context) {
        try {
            return isArray(body) ? parseArray(body, amqpMessageId, amqpTimestamp, context)
                    : parseChecked(body, amqpMessageId, amqpTimestamp, context, null);
        } catch (RuntimeException e) {
            return couldNotBeRead(e, body, context);
        }
    }

    /**
     * A message published over MQTT to {@code lockwatch/readings/<sensor id>}, as it reaches ingest: routing key
     * {@code lockwatch.readings.<sensor id>} (RabbitMQ's MQTT plugin turns the topic's {@code /} into {@code .}; the
     * embedded listener's bridge does the same). Its payload is a bare {@code 0} or {@code 1} for that sensor, or a
     * v1 reading whose {@code sensor_id}, if given, is the topic's.
     *
     * @param topicSensor what follows {@code lockwatch.readings.} in the routing key
     * @return a {@link Reading} or a {@link Rejection}
     */
    public Object parseMqtt(byte[] body, String topicSensor, String amqpMessageId, Date amqpTimestamp,
                            Supplier<Map<String, Object>> context) {
        try {
            if (!isSensorId(topicSensor)) {
                String topic = MQTT_TOPIC_PREFIX + topicSensor.replace('.', '/');
                return reject(Reason.INVALID_TOPIC, "topic must be " + MQTT_TOPIC_PREFIX
                        + "<sensor id of 1 to 16 letters and digits>, got " + (topic.length() > 80
                        ? topic.substring(0, 80) + "…" : topic), body, context);
            }
            int bare = bare(body);
            if (bare >= 0) {
                JsonNodeFactory nodes = JsonNodeFactory.instance;
                return judge(new Fields(nodes.textNode(topicSensor), nodes.numberNode(bare), null, null, null, null,
                        null, null), () -> body,
                        amqpMessageId, amqpTimestamp, clock.getAsLong(), context);
            }
            if (!startsWith(body, '{')) {
                String text = body == null ? "" : new String(body, java.nio.charset.StandardCharsets.UTF_8).strip();
                return reject(Reason.INVALID_DATA, "an MQTT payload is a bare 0 or 1, or one JSON reading, got \""
                        + (text.length() > 40 ? text.substring(0, 40) + "…" : text) + "\"", body, context);
            }
            return parseChecked(body, amqpMessageId, amqpTimestamp, context, topicSensor);
        } catch (RuntimeException e) {
            return couldNotBeRead(e, body, context);
        }
    }

    /** The MQTT topic readings are published to, followed by the sensor's id. */
    public static final String MQTT_TOPIC_PREFIX = "lockwatch/readings/";

    /** 0 or 1 for a body that is that digit alone (white space around it allowed); else -1. */
    private static int bare(byte[] body) {
        int digit = -1;
        for (byte b : body == null ? new byte[0] : body) {
            if (b == ' ' || b == '\t' || b == '\n' || b == '\r') {
                continue;
            }
            if (digit != -1 || (b != '0' && b != '1')) {
                return -1;
            }
            digit = b - '0';
        }
        return digit;
    }

    private Object parseArray(byte[] body, String amqpMessageId, Date amqpTimestamp,
                              Supplier<Map<String, Object>> context) {
        long now = clock.getAsLong();
        if (body.length > maxArrayBodyBytes) {
            return reject(Reason.BODY_TOO_LARGE, "array body of " + body.length + " bytes exceeds the limit of "
                    + maxArrayBodyBytes, body, context);
        }
        java.util.List<Object> parsed = new java.util.ArrayList<>();
        int count = 0;
        try (JsonParser p = JSON.createParser(body)) {
            p.nextToken(); // the array's start
            while (p.nextToken() != JsonToken.END_ARRAY) {
                int index = count++;
                if (index >= MAX_READINGS) {
                    p.skipChildren(); // counted, to be refused once the whole is known to be JSON
                    continue;
                }
                Supplier<Map<String, Object>> elementContext = () -> {
                    Map<String, Object> c = new LinkedHashMap<>(context == null ? Map.of() : context.get());
                    c.put(INDEX_HEADER, index);
                    return c;
                };
                Object one;
                if (p.currentToken() == JsonToken.START_OBJECT) {
                    int from = (int) p.currentTokenLocation().getByteOffset();
                    Fields fields = readFields(p);
                    int to = (int) p.currentLocation().getByteOffset();
                    // a bad element is parked as it was sent
                    one = judge(fields, () -> java.util.Arrays.copyOfRange(body, from, to),
                            amqpMessageId == null ? null : amqpMessageId + "#" + index, amqpTimestamp, now, elementContext);
                } else {
                    JsonNode element = IN_PLACE.readTree(p);
                    String shown = element == null ? "null" : element.toString();
                    one = reject(Reason.NOT_AN_OBJECT, "expected a JSON object, got "
                                    + (element == null ? "null" : element.getNodeType()),
                            shown.getBytes(java.nio.charset.StandardCharsets.UTF_8), elementContext);
                }
                parsed.add(one instanceof Rejection r
                        ? new Rejection(r.reason(), "[" + index + "] " + r.detail(), r.body(), r.properties()) : one);
            }
            if (p.nextToken() != null) {
                return reject(Reason.MALFORMED_JSON, "more content after the array", body, context);
            }
        } catch (IOException e) {
            return malformed(e, body, context);
        }
        if (count == 0) {
            return reject(Reason.NOT_AN_OBJECT, "an empty array holds no reading", body, context);
        }
        if (count > MAX_READINGS) {
            return reject(Reason.TOO_MANY_READINGS, "an array of " + count + " readings exceeds the limit of "
                    + MAX_READINGS, body, context);
        }
        return parsed;
    }

    private static boolean isArray(byte[] body) {
        return startsWith(body, '[');
    }

    /** Whether the first byte that is no white space is {@code c}. */
    private static boolean startsWith(byte[] body, char c) {
        if (body == null) {
            return false;
        }
        for (byte b : body) {
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return b == c;
            }
        }
        return false;
    }

    /**
     * @param body          the raw body
     * @param amqpMessageId the AMQP {@code message_id} property, or null
     * @param amqpTimestamp the AMQP {@code timestamp} property, or null
     * @param context       original routing facts kept with a rejection, asked for only when there is one
     * @return a {@link Reading} or a {@link Rejection}
     */
    public Object parse(byte[] body, String amqpMessageId, Date amqpTimestamp, Supplier<Map<String, Object>> context) {
        try {
            return parseChecked(body, amqpMessageId, amqpTimestamp, context, null);
        } catch (RuntimeException e) {
            return couldNotBeRead(e, body, context);
        }
    }

    /** A case the checks missed: the message is still parked with a reason, never lost or retried. */
    private static Rejection couldNotBeRead(RuntimeException e, byte[] body, Supplier<Map<String, Object>> context) {
        return reject(Reason.PROCESSING_FAILED, "could not be read: " + firstLine(e.toString()), body, context);
    }

    private static Rejection malformed(IOException e, byte[] body, Supplier<Map<String, Object>> context) {
        String message = e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage();
        return reject(Reason.MALFORMED_JSON, firstLine(message), body, context);
    }

    /** @param topicSensor over MQTT, the sensor the topic names (the body's, if it names one, must be it); else null */
    private Object parseChecked(byte[] body, String amqpMessageId, Date amqpTimestamp,
                                Supplier<Map<String, Object>> context, String topicSensor) {
        long now = clock.getAsLong();
        if (body == null || body.length == 0) {
            return reject(Reason.MALFORMED_JSON, "empty body", body, context);
        }
        if (body.length > maxBodyBytes) {
            return reject(Reason.BODY_TOO_LARGE, "body of " + body.length + " bytes exceeds the limit of " + maxBodyBytes,
                    body, context);
        }
        Fields fields;
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return notAnObject(body, context);
            }
            fields = readFields(p);
            if (p.nextToken() != null) {
                return reject(Reason.MALFORMED_JSON, "more content after the reading's object", body, context);
            }
        } catch (IOException e) {
            return malformed(e, body, context);
        }
        if (topicSensor != null) {
            JsonNode named = fields.sensor();
            if (named == null || named.isNull()) {
                fields = new Fields(JsonNodeFactory.instance.textNode(topicSensor), fields.data(), fields.messageId(),
                        fields.ts(), fields.battery(), fields.tamper(), fields.rssi(), fields.snr());
            } else if (!named.isTextual() || !named.textValue().equals(topicSensor)) {
                return reject(Reason.TOPIC_MISMATCH, "sensor_id " + shown(named) + " is not the topic's sensor "
                        + topicSensor, body, context);
            }
        }
        return judge(fields, () -> body, amqpMessageId, amqpTimestamp, now, context);
    }

    /** The fields of a reading as read, each null where absent; the others are skipped. */
    /**
     * Text without control characters (NUL among them: PostgreSQL keeps none) and without a lone surrogate (it
     * would be stored as '?'); tabs and line breaks only if allowed.
     */
    public static boolean isPlainText(String s, boolean tabsAndLineBreaks) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c < 0x20 || c == 0x7f) && !(tabsAndLineBreaks && (c == '\t' || c == '\n' || c == '\r'))) {
                return false;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private record Fields(JsonNode sensor, JsonNode data, JsonNode messageId, JsonNode ts, JsonNode battery,
                          JsonNode tamper, JsonNode rssi, JsonNode snr) {
    }

    /**
     * Reads one object from its {@code START_OBJECT} to its {@code END_OBJECT}, keeping the reading's fields: a
     * parser bound to the reading, rather than a tree of the whole message. A field given twice is malformed (the
     * parser's duplicate detection), as in the tree.
     */
    private static Fields readFields(JsonParser p) throws IOException {
        JsonNode sensor = null, data = null, messageId = null, ts = null, battery = null, tamper = null, rssi = null,
                snr = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            switch (name) {
                case "sensor_id" -> sensor = value(p, value);
                case "data" -> data = value(p, value);
                case "message_id" -> messageId = value(p, value);
                case "ts" -> ts = value(p, value);
                case "battery" -> battery = value(p, value);
                case "tamper" -> tamper = value(p, value);
                case "rssi" -> rssi = value(p, value);
                case "snr" -> snr = value(p, value);
                default -> p.skipChildren();
            }
        }
        return new Fields(sensor, data, messageId, ts, battery, tamper, rssi, snr);
    }

    private static JsonNode value(JsonParser p, JsonToken token) throws IOException {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        return switch (token) {
            case VALUE_STRING -> nodes.textNode(p.getText());
            case VALUE_NUMBER_INT -> switch (p.getNumberType()) {
                case INT -> nodes.numberNode(p.getIntValue());
                case LONG -> nodes.numberNode(p.getLongValue());
                default -> nodes.numberNode(p.getBigIntegerValue());
            };
            case VALUE_NUMBER_FLOAT -> nodes.numberNode(p.getDoubleValue());
            case VALUE_TRUE, VALUE_FALSE -> nodes.booleanNode(token == JsonToken.VALUE_TRUE);
            case VALUE_NULL -> nodes.nullNode();
            default -> IN_PLACE.readTree(p); // an object or array where a value belongs: read only to be shown
        };
    }

    /** A body that is no object: read as a tree to say what it is instead (or that it is no JSON at all). */
    private static Rejection notAnObject(byte[] body, Supplier<Map<String, Object>> context) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            return malformed(e, body, context);
        }
        return reject(Reason.NOT_AN_OBJECT, "expected a JSON object, got " + (root == null ? "nothing" : root.getNodeType()),
                body, context);
    }

    /** One reading's fields judged; {@code body}: what a rejection keeps of it, asked for only then. */
    private Object judge(Fields root, Supplier<byte[]> body, String amqpMessageId, Date amqpTimestamp, long now,
                         Supplier<Map<String, Object>> context) {
        JsonNode sensor = root.sensor();
        if (sensor == null || sensor.isNull()) {
            return reject(Reason.MISSING_SENSOR_ID, "sensor_id is required", body.get(), context);
        }
        if (!sensor.isTextual() || !isSensorId(sensor.textValue())) {
            return reject(Reason.INVALID_SENSOR_ID, "sensor_id must be a string of 1 to 16 letters and digits, got "
                    + shown(sensor), body.get(), context);
        }

        JsonNode data = root.data();
        if (data == null || data.isNull()) {
            return reject(Reason.MISSING_DATA, "data is required", body.get(), context);
        }
        if (!data.isIntegralNumber() || !(data.asLong() == 0 || data.asLong() == 1)) {
            return reject(Reason.INVALID_DATA, "data must be the number 0 or 1, got " + shown(data), body.get(), context);
        }

        String messageId = amqpMessageId;
        JsonNode mid = root.messageId();
        if (mid != null && !mid.isNull()) {
            if (!mid.isTextual() || mid.textValue().isEmpty() || mid.textValue().length() > MESSAGE_ID_MAX) {
                return reject(Reason.INVALID_MESSAGE_ID, "message_id must be a string of 1 to " + MESSAGE_ID_MAX
                        + " characters, got " + shown(mid), body.get(), context);
            }
            messageId = mid.textValue();
        }
        if (messageId != null && !isPlainText(messageId, false)) {
            // PostgreSQL keeps no NUL in text: the history's insert would fail for the whole batch
            return reject(Reason.INVALID_MESSAGE_ID, "message_id must not contain control characters or broken UTF-16",
                    body.get(), context);
        }

        long measuredAt;
        TimeSource source;
        JsonNode ts = root.ts();
        if (ts != null && !ts.isNull()) {
            Object parsed = parseTs(ts);
            if (parsed instanceof String problem) {
                return reject(Reason.INVALID_TS, problem, body.get(), context);
            }
            measuredAt = (Long) parsed;
            source = TimeSource.READING;
        } else if (amqpTimestamp != null) {
            measuredAt = amqpTimestamp.getTime();
            source = TimeSource.AMQP_TIMESTAMP;
        } else {
            measuredAt = now;
            source = TimeSource.RECEIPT;
        }
        if (measuredAt > now + maxClockSkewMillis) {
            return reject(Reason.TS_IN_FUTURE, "measured time " + Instant.ofEpochMilli(measuredAt) + " is ahead of "
                    + Instant.ofEpochMilli(now) + " by more than " + maxClockSkewMillis + " ms", body.get(), context);
        }
        Object health = health(root, body, context);
        if (health instanceof Rejection refused) {
            return refused;
        }
        return new Reading(sensor.textValue(), data.intValue(), measuredAt, source, now, messageId, (DeviceHealth) health);
    }

    /**
     * The device's own state beside its door, each field optional (null: not given): a value out of its range refuses
     * the reading, as any field of the contract does, so that a device that reports nonsense is told so.
     *
     * @return the health, null when the reading says nothing of it, or the rejection of the field that is wrong
     */
    private static Object health(Fields f, Supplier<byte[]> body, Supplier<Map<String, Object>> context) {
        Double battery = null;
        Boolean tamper = null;
        Integer rssi = null;
        Double snr = null;
        if (given(f.battery())) {
            if (!f.battery().isNumber() || !(f.battery().asDouble() >= 0 && f.battery().asDouble() <= 100)) {
                return reject(Reason.INVALID_BATTERY, "battery must be a number from 0 to 100 (percent), got "
                        + shown(f.battery()), body.get(), context);
            }
            battery = f.battery().asDouble();
        }
        if (given(f.tamper())) {
            if (!f.tamper().isBoolean()) {
                return reject(Reason.INVALID_TAMPER, "tamper must be true or false, got " + shown(f.tamper()), body.get(),
                        context);
            }
            tamper = f.tamper().booleanValue();
        }
        if (given(f.rssi())) {
            if (!f.rssi().isIntegralNumber() || !f.rssi().canConvertToInt() || f.rssi().intValue() < DeviceHealth.RSSI_MIN
                    || f.rssi().intValue() > 0) {
                return reject(Reason.INVALID_RSSI, "rssi must be a whole number of dBm from " + DeviceHealth.RSSI_MIN
                        + " to 0, got " + shown(f.rssi()), body.get(), context);
            }
            rssi = f.rssi().intValue();
        }
        if (given(f.snr())) {
            if (!f.snr().isNumber() || !(Math.abs(f.snr().asDouble()) <= DeviceHealth.SNR_LIMIT)) {
                return reject(Reason.INVALID_SNR, "snr must be a number of dB from -" + DeviceHealth.SNR_LIMIT + " to "
                        + DeviceHealth.SNR_LIMIT + ", got " + shown(f.snr()), body.get(), context);
            }
            snr = f.snr().asDouble();
        }
        return battery == null && tamper == null && rssi == null && snr == null ? null
                : new DeviceHealth(battery, tamper, rssi, snr);
    }

    private static boolean given(JsonNode n) {
        return n != null && !n.isNull();
    }

    /** @return epoch milliseconds, or a String saying what is wrong */
    private static Object parseTs(JsonNode ts) {
        if (ts.isIntegralNumber()) {
            if (!ts.canConvertToLong()) {
                return "ts " + shown(ts) + " is out of range";
            }
            long millis = ts.longValue();
            if (millis < EPOCH_MILLIS_PLAUSIBLE) {
                return "ts " + millis + " is not epoch milliseconds (seconds sent by mistake?)";
            }
            if (millis > EPOCH_MILLIS_MAX) {
                return "ts " + millis + " is out of range";
            }
            return millis;
        }
        if (ts.isTextual()) {
            Instant at;
            try {
                at = OffsetDateTime.parse(ts.textValue()).toInstant();
            } catch (DateTimeParseException e) {
                return "ts must be RFC 3339 with an offset (2026-11-21T12:00:00.123Z) or epoch milliseconds, got "
                        + shown(ts);
            } catch (DateTimeException e) {
                return "ts " + shown(ts) + " is out of range";
            }
            // compared as instants: a year such as +999999999 has no epoch milliseconds
            if (at.isBefore(Instant.ofEpochMilli(EPOCH_MILLIS_PLAUSIBLE)) || at.isAfter(Instant.ofEpochMilli(EPOCH_MILLIS_MAX))) {
                return "ts " + shown(ts) + " is out of range (1973 to 2100)";
            }
            return at.toEpochMilli();
        }
        return "ts must be an RFC 3339 string or epoch milliseconds, got " + shown(ts);
    }

    private static Rejection reject(Reason reason, String detail, byte[] body, Supplier<Map<String, Object>> context) {
        return new Rejection(reason, detail, body, context == null ? Map.of() : new LinkedHashMap<>(context.get()));
    }

    /** A value as shown in a rejection reason: its JSON, cut short. */
    private static String shown(JsonNode node) {
        String text = node.toString();
        return text.length() > 40 ? text.substring(0, 40) + "…" : text;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "not JSON";
        }
        String line = message.lines().findFirst().orElse(message);
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
    }
}
