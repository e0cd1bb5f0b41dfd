package io.lockwatch.api;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.ingest.Rejection;
import org.apache.camel.Exchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;

/**
 * Readings over HTTP, for gateways without AMQP and for trying lockwatch by hand: one reading or an array, each
 * checked as ingest checks it (a bad one is a 400 naming it, and nothing is published), then published to the
 * readings exchange exactly as a sensor would, and answered once the broker confirmed them all.
 */
public class ReadingsApi {

    static final int MAX_READINGS = 1000;

    private final ReadingParser parser;
    private final ConfirmedPublisher publisher;
    private final IngestProperties ingest;

    public ReadingsApi(ReadingParser parser, ConfirmedPublisher publisher, IngestProperties ingest) {
        this.parser = parser;
        this.publisher = publisher;
        this.ingest = ingest;
    }

    public void post(Exchange exchange) {
        JsonNode body = Json.body(exchange);
        List<JsonNode> readings = new ArrayList<>();
        if (body.isArray()) {
            body.forEach(readings::add);
            if (readings.isEmpty() || readings.size() > MAX_READINGS) {
                throw ApiProblem.badRequest(null, "give 1 to " + MAX_READINGS + " readings");
            }
        } else {
            readings.add(body);
        }
        List<Outgoing> messages = new ArrayList<>(readings.size());
        for (int i = 0; i < readings.size(); i++) {
            byte[] bytes = readings.get(i).toString().getBytes(StandardCharsets.UTF_8);
            Object parsed = parser.parse(bytes, null, null, Map::of);
            if (parsed instanceof Rejection r) {
                String field = (body.isArray() ? "[" + i + "]" + (field(r.reason()).isEmpty() ? "" : ".") : "") + field(r.reason());
                throw ApiProblem.badRequest(field.isEmpty() ? null : field, r.detail());
            }
            MessageProperties p = new MessageProperties();
            p.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
            p.setContentType("application/json");
            p.setHeader("x-lockwatch-via", "http");
            messages.add(new Outgoing(ingest.exchange(), readings.get(i).get("sensor_id").textValue(), new Message(bytes, p)));
        }
        publisher.publish(messages, Duration.ofSeconds(10));
        Json.respond(exchange, 202, Map.of("accepted", messages.size()));
    }

    private static String field(Rejection.Reason reason) {
        return switch (reason) {
            case MISSING_SENSOR_ID, INVALID_SENSOR_ID -> "sensor_id";
            case MISSING_DATA, INVALID_DATA -> "data";
            case INVALID_TS, TS_IN_FUTURE -> "ts";
            case INVALID_MESSAGE_ID -> "message_id";
            default -> "";
        };
    }
}
