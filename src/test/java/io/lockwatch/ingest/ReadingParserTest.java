package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.lockwatch.ingest.Reading.TimeSource;
import io.lockwatch.ingest.Rejection.Reason;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class ReadingParserTest {

    static final long NOW = Instant.parse("2026-11-21T12:00:00Z").toEpochMilli();
    final ReadingParser parser = new ReadingParser(4096, 131_072, 300_000, () -> NOW);

    private Object parse(String body) {
        return parser.parse(body.getBytes(StandardCharsets.UTF_8), null, null, () -> Map.of("x-original-routing-key", "k"));
    }

    /** The hand-written check on ingest's path and the contract's pattern agree, on the edges and on random strings. */
    @Test
    void theSensorIdCheckAgreesWithItsPattern() {
        List<String> edges = new java.util.ArrayList<>(List.of("", "a", "Z", "0", "9", "0123456789abcdef", "0123456789abcdefg",
                "a b", "a-b", "a_b", "é", "a\n", "A/", "@", "[", "`", "{", ":", "\u0660", "ab.c"));
        java.util.Random random = new java.util.Random(42);
        String alphabet = "09azAZ/:@[`{ -_.é\u0660";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int n = random.nextInt(19); n > 0; n--) {
                b.append(random.nextInt(4) == 0 ? alphabet.charAt(random.nextInt(alphabet.length()))
                        : (char) ('0' + random.nextInt(75)));
            }
            edges.add(b.toString());
        }
        for (String id : edges) {
            assertThat(ReadingParser.isSensorId(id)).as("'%s'", id).isEqualTo(ReadingParser.SENSOR_ID.matcher(id).matches());
        }
    }

    @Test
    void minimalReadingIsMeasuredAtReceipt() {
        Reading r = (Reading) parse("{\"sensor_id\": \"xa7v9Dfadr7H\", \"data\": 1}");

        assertThat(r).isEqualTo(new Reading("xa7v9Dfadr7H", 1, NOW, TimeSource.RECEIPT, NOW, null));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\"2026-11-21T11:59:58Z\"          | 2026-11-21T11:59:58Z",
            "\"2026-11-21T11:59:58.123Z\"      | 2026-11-21T11:59:58.123Z",
            "\"2026-11-21T14:59:58.5+03:00\"   | 2026-11-21T11:59:58.500Z",
            "1795262398123                     | 2026-11-21T11:59:58.123Z"})
    void measuredTimeIsRfc3339OrEpochMillis(String ts, String expected) {
        Reading r = (Reading) parse("{\"sensor_id\":\"0xA\",\"data\":0,\"ts\":" + ts + "}");

        assertThat(Instant.ofEpochMilli(r.measuredAt())).isEqualTo(Instant.parse(expected));
        assertThat(r.timeSource()).isEqualTo(TimeSource.READING);
    }

    @Test
    void amqpPropertiesStandInForMissingFields() {
        Date amqpTs = Date.from(Instant.parse("2026-11-21T11:00:00Z"));
        Reading r = (Reading) parser.parse("{\"sensor_id\":\"TestSensor\",\"data\":1}".getBytes(StandardCharsets.UTF_8),
                "m-1", amqpTs, Map::of);

        assertThat(r.messageId()).isEqualTo("m-1");
        assertThat(r.measuredAt()).isEqualTo(amqpTs.getTime());
        assertThat(r.timeSource()).isEqualTo(TimeSource.AMQP_TIMESTAMP);
    }

    @Test
    void bodyFieldsWinOverAmqpProperties() {
        Reading r = (Reading) parser.parse(
                "{\"sensor_id\":\"TestSensor\",\"data\":1,\"message_id\":\"body-id\",\"ts\":1795262398123}".getBytes(StandardCharsets.UTF_8),
                "amqp-id", new Date(NOW - 1000), Map::of);

        assertThat(r.messageId()).isEqualTo("body-id");
        assertThat(r.measuredAt()).isEqualTo(1795262398123L);
    }

    @Test
    void aValidReadingNeverGathersTheRejectionContext() {
        Object parsed = parser.parse("{\"sensor_id\":\"a\",\"data\":1}".getBytes(StandardCharsets.UTF_8), null, null,
                () -> { throw new AssertionError("gathered for a valid reading"); });

        assertThat(parsed).isInstanceOf(Reading.class);
    }

    @Test
    void unknownFieldsAreIgnored() {
        assertThat(parse("{\"sensor_id\":\"0123456789aBcDeF\",\"data\":0,\"fw\":{\"v\":2},\"voltage\":3.1}"))
                .isInstanceOfSatisfying(Reading.class, r -> assertThat(r.health()).isNull());
    }

    @Test
    void theDevicesHealthIsReadBesideItsDoor() {
        assertThat(parse("{\"sensor_id\":\"a\",\"data\":0,\"battery\":93.5,\"tamper\":true,\"rssi\":-97,\"snr\":-7.25}"))
                .isInstanceOfSatisfying(Reading.class, r -> {
                    assertThat(r.data()).isZero();
                    assertThat(r.health()).isEqualTo(new DeviceHealth(93.5, true, -97, -7.25));
                });
        assertThat(parse("{\"sensor_id\":\"a\",\"data\":1,\"battery\":0,\"tamper\":null}"))
                .isInstanceOfSatisfying(Reading.class, r -> assertThat(r.health()).isEqualTo(new DeviceHealth(0.0, null, null, null)));
        assertThat(parse("{\"sensor_id\":\"a\",\"data\":1,\"battery\":null,\"rssi\":null}"))
                .isInstanceOfSatisfying(Reading.class, r -> assertThat(r.health()).isNull());
        // over MQTT, with the sensor named by the topic
        assertThat(parser.parseMqtt("{\"data\":1,\"tamper\":false}".getBytes(StandardCharsets.UTF_8),
                "a", null, null, Map::of))
                .isInstanceOfSatisfying(Reading.class, r -> assertThat(r.health()).isEqualTo(new DeviceHealth(null, false, null, null)));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "''                                              | MALFORMED_JSON",
            "{\"sensor_id\": \"a\", \"data\": 1                | MALFORMED_JSON",
            "{\"sensor_id\":\"a\",\"data\":1} trailing        | MALFORMED_JSON",
            "{\"sensor_id\":\"a\",\"sensor_id\":\"b\",\"data\":1} | MALFORMED_JSON",
            "[1,2]                                           | NOT_AN_OBJECT",
            "\"text\"                                        | NOT_AN_OBJECT",
            "{\"data\": 1}                                   | MISSING_SENSOR_ID",
            "{\"sensor_id\": null, \"data\": 1}              | MISSING_SENSOR_ID",
            "{\"sensor_id\": \"\", \"data\": 1}              | INVALID_SENSOR_ID",
            "{\"sensor_id\": \"has-dash\", \"data\": 1}      | INVALID_SENSOR_ID",
            "{\"sensor_id\": \"0123456789aBcDeF0\", \"data\": 1} | INVALID_SENSOR_ID",
            "{\"sensor_id\": 12345, \"data\": 1}             | INVALID_SENSOR_ID",
            "{\"sensor_id\": \"Dvéře\", \"data\": 1}         | INVALID_SENSOR_ID",
            "{\"sensor_id\": \"a\"}                          | MISSING_DATA",
            "{\"sensor_id\": \"a\", \"data\": 2}             | INVALID_DATA",
            "{\"sensor_id\": \"a\", \"data\": \"1\"}         | INVALID_DATA",
            "{\"sensor_id\": \"a\", \"data\": 1.0}           | INVALID_DATA",
            "{\"sensor_id\": \"a\", \"data\": true}          | INVALID_DATA",
            "{\"sensor_id\": \"a\", \"data\": -1}            | INVALID_DATA",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"yesterday\"}             | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"2026-11-21T11:59:58\"}   | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": 1795262398}                | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": 1.5}                       | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"2026-11-21T12:10:00Z\"}  | TS_IN_FUTURE",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"+999999999-12-31T23:59:59Z\"} | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"-999999999-01-01T00:00:00Z\"} | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"2200-01-01T00:00:00Z\"}  | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": \"1970-01-02T00:00:00Z\"}  | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"ts\": 99999999999999999999}     | INVALID_TS",
            "{\"sensor_id\": \"a\", \"data\": 1, \"message_id\": 7}                 | INVALID_MESSAGE_ID",
            "{\"sensor_id\": \"a\", \"data\": 1, \"message_id\": \"\"}             | INVALID_MESSAGE_ID",
            "{\"sensor_id\": \"a\", \"data\": 1, \"message_id\": \"m\\u0000\"}      | INVALID_MESSAGE_ID",
            "{\"sensor_id\": \"a\", \"data\": 1, \"message_id\": \"m\\t1\"}         | INVALID_MESSAGE_ID",
            "{\"sensor_id\": \"a\", \"data\": 1, \"message_id\": \"\\ud800\"}      | INVALID_MESSAGE_ID",
            "{\"sensor_id\": \"a\", \"data\": 0, \"battery\": 100.5}            | INVALID_BATTERY",
            "{\"sensor_id\": \"a\", \"data\": 0, \"battery\": -1}               | INVALID_BATTERY",
            "{\"sensor_id\": \"a\", \"data\": 0, \"battery\": \"93\"}           | INVALID_BATTERY",
            "{\"sensor_id\": \"a\", \"data\": 0, \"tamper\": 1}                 | INVALID_TAMPER",
            "{\"sensor_id\": \"a\", \"data\": 0, \"tamper\": \"true\"}          | INVALID_TAMPER",
            "{\"sensor_id\": \"a\", \"data\": 0, \"rssi\": -97.5}               | INVALID_RSSI",
            "{\"sensor_id\": \"a\", \"data\": 0, \"rssi\": 3}                   | INVALID_RSSI",
            "{\"sensor_id\": \"a\", \"data\": 0, \"rssi\": -201}                | INVALID_RSSI",
            "{\"sensor_id\": \"a\", \"data\": 0, \"rssi\": 99999999999}         | INVALID_RSSI",
            "{\"sensor_id\": \"a\", \"data\": 0, \"snr\": 51}                   | INVALID_SNR",
            "{\"sensor_id\": \"a\", \"data\": 0, \"snr\": [1]}                  | INVALID_SNR"})
    void invalidInputIsRejectedWithItsReason(String body, Reason reason) {
        Object parsed = parse(body);

        assertThat(parsed).isInstanceOf(Rejection.class);
        Rejection r = (Rejection) parsed;
        assertThat(r.reason()).isEqualTo(reason);
        assertThat(r.detail()).isNotBlank();
        if (Set.of(Reason.INVALID_BATTERY, Reason.INVALID_TAMPER, Reason.INVALID_RSSI, Reason.INVALID_SNR).contains(reason)) {
            assertThat(r.detail()).startsWith(reason.code().substring("invalid_".length()) + " must be");
        }
        assertThat(r.body()).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
        assertThat(r.properties()).containsEntry("x-original-routing-key", "k");
    }

    @Test
    void theServicesClockDecidesWhatIsAheadWithASmallTolerance() {
        ReadingParser fiveSeconds = new ReadingParser(4096, 131_072, 5_000, () -> NOW);
        java.util.function.LongFunction<Object> at = millis -> fiveSeconds.parse(
                ("{\"sensor_id\": \"a\", \"data\": 1, \"ts\": " + millis + "}").getBytes(StandardCharsets.UTF_8),
                null, null, Map::of);

        assertThat(at.apply(NOW + 5_000)).isInstanceOfSatisfying(Reading.class, r -> {
            assertThat(r.appliedAt()).as("ahead, it is applied as measured when it arrived").isEqualTo(NOW);
            assertThat(r.measuredAt()).as("history keeps the time it claims").isEqualTo(NOW + 5_000);
        });
        assertThat(at.apply(NOW - 1_000)).isInstanceOfSatisfying(Reading.class,
                r -> assertThat(r.appliedAt()).as("a time in the past is its own").isEqualTo(NOW - 1_000));
        assertThat(at.apply(NOW + 5_001)).isInstanceOfSatisfying(Rejection.class,
                r -> assertThat(r.reason()).isEqualTo(Reason.TS_IN_FUTURE));
        // the report that started this: 4 min 55 s ahead was accepted under the old 5-minute skew
        assertThat(at.apply(NOW + 295_000)).isInstanceOfSatisfying(Rejection.class,
                r -> assertThat(r.detail()).contains("ahead"));
    }

    @Test
    void aFailureTheChecksDidNotForeseeIsARejectionNotAnException() {
        ReadingParser broken = new ReadingParser(4096, 131_072, 5_000, () -> {
            throw new IllegalStateException("no clock");
        });

        Object parsed = broken.parse("{\"sensor_id\": \"a\", \"data\": 1}".getBytes(StandardCharsets.UTF_8), null, null, Map::of);

        assertThat(parsed).isInstanceOfSatisfying(Rejection.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.PROCESSING_FAILED);
            assertThat(r.detail()).contains("no clock");
        });
    }

    @Test
    void tooLargeBodiesAreRejectedUnread() {
        String big = "{\"sensor_id\":\"a\",\"data\":1,\"pad\":\"" + "x".repeat(5000) + "\"}";

        assertThat(((Rejection) parse(big)).reason()).isEqualTo(Reason.BODY_TOO_LARGE);
    }

    @Test
    void invalidUtf8IsMalformed() {
        byte[] body = {'{', '"', 's', 'e', 'n', 's', 'o', 'r', '_', 'i', 'd', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};

        Rejection r = (Rejection) parser.parse(body, null, null, Map::of);

        assertThat(r.reason()).isEqualTo(Reason.MALFORMED_JSON);
    }

    @Test
    void anAmqpMessageIdThatADatabaseCannotKeepIsRejectedAndAnEmojiIsNot() {
        byte[] body = "{\"sensor_id\":\"a\",\"data\":1}".getBytes(StandardCharsets.UTF_8);

        Rejection nul = (Rejection) parser.parse(body, "id\u0000x", null, Map::of);
        Reading emoji = (Reading) parser.parse(body, "door-\uD83D\uDEAA", null, Map::of);

        assertThat(nul.reason()).isEqualTo(Reason.INVALID_MESSAGE_ID);
        assertThat(emoji.messageId()).isEqualTo("door-\uD83D\uDEAA");
    }

    @Test
    void longMessageIdIsRejectedAndEchoedValuesAreCut() {
        Rejection r = (Rejection) parse("{\"sensor_id\":\"a\",\"data\":1,\"message_id\":\"" + "m".repeat(200) + "\"}");

        assertThat(r.reason()).isEqualTo(Reason.INVALID_MESSAGE_ID);
        assertThat(r.detail().length()).isLessThan(120);
    }

    // --- a message holding an array of readings (a gateway's)

    @Test
    void eachReadingOfAnArrayIsJudgedOnItsOwnAndABadOneKeepsItsIndex() {
        String body = """
                [{"sensor_id": "a", "data": 1, "ts": %d},
                 {"sensor_id": "not valid!", "data": 1},
                 {"sensor_id": "b", "data": 0, "message_id": "own"},
                 [1, 2],
                 {"sensor_id": "c", "data": 7}]""".formatted(NOW - 1000);

        Object parsed = parser.parseMessage(body.getBytes(StandardCharsets.UTF_8), "gw-17", null,
                () -> Map.of("x-original-routing-key", "gateway"));

        assertThat(parsed).asList().hasSize(5);
        List<?> all = (List<?>) parsed;
        assertThat(all.get(0)).isEqualTo(new Reading("a", 1, NOW - 1000, TimeSource.READING, NOW, "gw-17#0"));
        assertThat(all.get(2)).isEqualTo(new Reading("b", 0, NOW, TimeSource.RECEIPT, NOW, "own"));
        assertThat(List.of(all.get(1), all.get(3), all.get(4))).allSatisfy(r -> assertThat(r).isInstanceOf(Rejection.class));
        Rejection second = (Rejection) all.get(1);
        assertThat(second.reason()).isEqualTo(Reason.INVALID_SENSOR_ID);
        assertThat(second.detail()).startsWith("[1] ");
        assertThat(new String(second.body(), StandardCharsets.UTF_8)).as("as it was sent")
                .isEqualTo("{\"sensor_id\": \"not valid!\", \"data\": 1}");
        assertThat(second.properties()).containsEntry(ReadingParser.INDEX_HEADER, 1)
                .containsEntry("x-original-routing-key", "gateway");
        assertThat(((Rejection) all.get(3)).reason()).isEqualTo(Reason.NOT_AN_OBJECT);
        assertThat(((Rejection) all.get(4)).reason()).isEqualTo(Reason.INVALID_DATA);
        assertThat(((Rejection) all.get(4)).properties()).containsEntry(ReadingParser.INDEX_HEADER, 4);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "[]                                         | NOT_AN_OBJECT",
            "[{\"sensor_id\": \"a\", \"data\": 1},       | MALFORMED_JSON",
            "  [{\"sensor_id\": \"a\", \"data\": 1}] []  | MALFORMED_JSON"})
    void anArrayThatCannotBeReadIsOneRejectionOfTheWholeMessage(String body, Reason reason) {
        Object parsed = parser.parseMessage(body.getBytes(StandardCharsets.UTF_8), null, null, Map::of);

        assertThat(parsed).isInstanceOfSatisfying(Rejection.class, r -> {
            assertThat(r.reason()).isEqualTo(reason);
            assertThat(r.body()).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
        });
    }

    @Test
    void anArrayIsLimitedInReadingsAndInBytes() {
        String one = "{\"sensor_id\":\"a\",\"data\":1}";
        String thousand = "[" + String.join(",", java.util.Collections.nCopies(1000, one)) + "]";
        String moreThanAThousand = "[" + String.join(",", java.util.Collections.nCopies(1001, one)) + "]";

        assertThat(parser.parseMessage(thousand.getBytes(StandardCharsets.UTF_8), null, null, Map::of)).asList().hasSize(1000);
        assertThat(parser.parseMessage(moreThanAThousand.getBytes(StandardCharsets.UTF_8), null, null, Map::of))
                .isInstanceOfSatisfying(Rejection.class, r -> assertThat(r.reason()).isEqualTo(Reason.TOO_MANY_READINGS));
        ReadingParser small = new ReadingParser(4096, 10_000, 5_000, () -> NOW);
        assertThat(small.parseMessage(thousand.getBytes(StandardCharsets.UTF_8), null, null, Map::of))
                .isInstanceOfSatisfying(Rejection.class, r -> assertThat(r.reason()).isEqualTo(Reason.BODY_TOO_LARGE));
    }

    private Object mqtt(String topicSensor, String body) {
        return parser.parseMqtt(body.getBytes(StandardCharsets.UTF_8), topicSensor, null, null, Map::of);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"0|0", "1|1", "' 1\n'|1", "'\t0 '|0"})
    void overMqttABareDigitIsAReadingOfTheTopicsSensor(String body, int data) {
        assertThat(mqtt("door7", body)).isEqualTo(new Reading("door7", data, NOW, TimeSource.RECEIPT, NOW, null));
    }

    @Test
    void overMqttAJsonReadingTakesItsSensorFromTheTopicOrMustNameThatOne() {
        assertThat(mqtt("door7", "{\"data\":1,\"ts\":1795262398123}"))
                .isEqualTo(new Reading("door7", 1, 1795262398123L, TimeSource.READING, NOW, null));
        assertThat(mqtt("door7", "{\"sensor_id\":\"door7\",\"data\":0,\"message_id\":\"m9\"}"))
                .isEqualTo(new Reading("door7", 0, NOW, TimeSource.RECEIPT, NOW, "m9"));
        assertThat(mqtt("door7", "{\"sensor_id\":\"door8\",\"data\":0}")).isInstanceOfSatisfying(Rejection.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.TOPIC_MISMATCH);
            assertThat(r.detail()).isEqualTo("sensor_id \"door8\" is not the topic's sensor door7");
        });
        // the rest is judged as over AMQP
        assertThat(mqtt("door7", "{\"data\":2}")).extracting(r -> ((Rejection) r).reason()).isEqualTo(Reason.INVALID_DATA);
        assertThat(mqtt("door7", "{\"data\":1,")).extracting(r -> ((Rejection) r).reason()).isEqualTo(Reason.MALFORMED_JSON);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "2            | an MQTT payload is a bare 0 or 1, or one JSON reading, got \"2\"",
            "open         | an MQTT payload is a bare 0 or 1, or one JSON reading, got \"open\"",
            "'01'         | an MQTT payload is a bare 0 or 1, or one JSON reading, got \"01\"",
            "'[{\"data\":1}]' | an MQTT payload is a bare 0 or 1, or one JSON reading, got \"[{\"data\":1}]\"",
            "''           | an MQTT payload is a bare 0 or 1, or one JSON reading, got \"\""})
    void overMqttAnythingElseIsInvalidData(String body, String detail) {
        assertThat(mqtt("door7", body)).isInstanceOfSatisfying(Rejection.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.INVALID_DATA);
            assertThat(r.detail()).isEqualTo(detail);
        });
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "a.b            | lockwatch/readings/a/b",
            "door-7         | lockwatch/readings/door-7",
            "''             | lockwatch/readings/",
            "x1234567890abcdefg | lockwatch/readings/x1234567890abcdefg"})
    void overMqttATopicThatNamesNoSensorIsInvalid(String topicSensor, String topic) {
        assertThat(mqtt(topicSensor, "1")).isInstanceOfSatisfying(Rejection.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.INVALID_TOPIC);
            assertThat(r.detail()).isEqualTo("topic must be lockwatch/readings/<sensor id of 1 to 16 letters and digits>, got "
                    + topic);
        });
    }
}
