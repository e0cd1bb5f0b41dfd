package io.lockwatch.api;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.devices.DeviceLogin;
import io.lockwatch.devices.Devices;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.ingest.Rejection;
import org.apache.camel.Exchange;
import org.apache.camel.component.platform.http.springboot.PlatformHttpMessage;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;

/**
 * Readings over HTTP, for gateways without AMQP and for trying lockwatch by hand: one reading or an array, each
 * checked as ingest checks it (a bad one is a 400 naming it, and nothing is published), then published to the
 * readings exchange exactly as a sensor would, and answered once the broker confirmed them all. A device posting with
 * its own credential is held to its sensors: a reading of another is refused (a 403 naming each), the others are
 * published all the same.
 */
public class ReadingsApi {

    static final int MAX_READINGS = 1000;

    private final ReadingParser parser;
    private final ConfirmedPublisher publisher;
    private final IngestProperties ingest;
    private final Devices devices;

    private final io.lockwatch.adapters.TheThingsStackAdapter theThingsStack;

    public ReadingsApi(ReadingParser parser, ConfirmedPublisher publisher, IngestProperties ingest, Devices devices,
                       io.lockwatch.adapters.TheThingsStackAdapter theThingsStack) {
        this.theThingsStack = theThingsStack;
        this.parser = parser;
        this.publisher = publisher;
        this.ingest = ingest;
        this.devices = devices;
    }

    public void post(Exchange exchange) {
        JsonNode body = Json.body(exchange);
        List<JsonNode> readings = new ArrayList<>();
        if (body.isArray()) {
            body.forEach(readings::add);
            if (readings.isEmpty() || readings.size() > MAX_READINGS) {
                // the element at fault: the first that is missing, or the first past the limit
                throw ApiProblem.badRequest("[" + Math.min(readings.size(), MAX_READINGS) + "]", "give 1 to "
                        + MAX_READINGS + " readings; " + (readings.isEmpty() ? "the array is empty" : "there are " + readings.size()));
            }
        } else {
            readings.add(body);
        }
        DeviceLogin device = device(exchange);
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
        List<String> refused = new ArrayList<>();
        if (device != null) {
            Set<String> own = devices.ownedAmong(device, messages.stream().map(Outgoing::routingKey).distinct().toList());
            List<Outgoing> allowed = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                if (own.contains(messages.get(i).routingKey())) {
                    allowed.add(messages.get(i));
                } else {
                    refused.add((body.isArray() ? "[" + i + "].sensor_id" : "sensor_id") + ": " + messages.get(i).routingKey()
                            + " is not a sensor " + device + " reports for");
                }
            }
            messages = allowed;
        }
        if (!messages.isEmpty()) {
            publisher.publish(messages, Duration.ofSeconds(10));
        }
        if (!refused.isEmpty()) {
            throw ApiProblem.forbidden(refused.size() + " of " + readings.size() + " readings refused: their sensors are "
                    + "not " + device + "'s; the other " + messages.size() + " were accepted", refused);
        }
        Json.respond(exchange, 202, Map.of("accepted", messages.size()));
    }

    /**
     * An uplink of The Things Stack's webhook, read as its MQTT uplinks are (TheThingsStackAdapter): the reading of
     * the sensor registered with its DevEUI, published as a sensor's own, answered 202 once the broker confirmed it.
     * The stack signs nothing: the webhook holds a lockwatch device credential (HTTP Basic, the stack's "request
     * authentication"), a gateway's whose sensors the application's devices are, and reports for them only (403
     * otherwise). An uplink that is no reading (a device no sensor names, no decoded payload, a simulated one) is
     * 202 with nothing accepted, so that the stack does not count it a failure.
     */
    public void postTheThingsStackUplink(Exchange exchange) {
        JsonNode body = Json.body(exchange);
        if (!body.isObject()) {
            throw ApiProblem.badRequest(null, "an uplink message is a JSON object");
        }
        DeviceLogin device = device(exchange);
        Outgoing reading = theThingsStack.uplink(body);
        if (reading == null) {
            Json.respond(exchange, 202, Map.of("accepted", 0));
            return;
        }
        String sensor;
        try {
            sensor = Json.MAPPER.readTree(reading.message().getBody()).get("sensor_id").asText();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("the adapter's reading is not JSON", e);
        }
        if (device != null && devices.ownedAmong(device, List.of(sensor)).isEmpty()) {
            // which sensor has the device is not said: a credential must not learn the registry's devices
            throw ApiProblem.forbidden("the uplink's device is not one " + device + " reports for",
                    List.of("end_device_ids.dev_eui: not a device of " + device));
        }
        // checked as ingest will check it, so that a reading it would refuse is a 400 here, with its reason
        if (parser.parse(reading.message().getBody(), null, null, Map::of) instanceof Rejection r) {
            throw ApiProblem.badRequest(null, "the uplink is no valid reading: " + r.detail());
        }
        reading.message().getMessageProperties().setHeader("x-lockwatch-via", "the-things-stack-webhook");
        publisher.publish(List.of(reading), Duration.ofSeconds(10));
        Json.respond(exchange, 202, Map.of("accepted", 1));
    }

    /** The device whose credential the request came with (SecurityConfiguration says so), or null for a token. */
    private static DeviceLogin device(Exchange exchange) {
        PlatformHttpMessage http = exchange.getIn(PlatformHttpMessage.class);
        if (http == null || http.getRequest() == null) {
            // without the request nothing tells a device from a token: refuse rather than let a device through
            throw new IllegalStateException("the HTTP request of a readings post is not at hand");
        }
        Object login = http.getRequest().getAttribute(DeviceLogin.REQUEST_ATTRIBUTE);
        return login == null ? null : DeviceLogin.parse(login.toString());
    }

    private static String field(Rejection.Reason reason) {
        return switch (reason) {
            case MISSING_SENSOR_ID, INVALID_SENSOR_ID -> "sensor_id";
            case MISSING_DATA, INVALID_DATA -> "data";
            case INVALID_TS, TS_IN_FUTURE -> "ts";
            case INVALID_MESSAGE_ID -> "message_id";
            case INVALID_BATTERY -> "battery";
            case INVALID_TAMPER -> "tamper";
            case INVALID_RSSI -> "rssi";
            case INVALID_SNR -> "snr";
            default -> "";
        };
    }
}
