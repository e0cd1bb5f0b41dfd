package io.lockwatch.devices;


import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.Exchange;

/**
 * RabbitMQ's HTTP auth backend asking who a device is and what it may do ({@code routes/devices.camel.yaml}). The
 * broker tries its own users first, so only device logins reach here; a device may log in with a live credential,
 * write to the readings exchange (AMQP, routing key = the sensor) or to the MQTT plugin's exchange (routing key
 * {@code lockwatch.readings.<sensor>}) for its own sensors, and nothing else: it reads and declares nothing, so it
 * subscribes to nothing. Each refusal is counted and logged ({@link Refusals}).
 */
public class BrokerAuth {

    private static final String MQTT_PREFIX = io.lockwatch.ingest.IngestSteps.MQTT_ROUTING_KEY_PREFIX;

    private final Devices devices;
    private final String readingsExchange;
    private final String mqttExchange;
    private final Refusals refusals;

    public BrokerAuth(Devices devices, String readingsExchange, String mqttExchange, MeterRegistry meters) {
        this.devices = devices;
        this.readingsExchange = readingsExchange;
        this.mqttExchange = mqttExchange;
        this.refusals = new Refusals(meters);
    }

    /** {@code username}, {@code password}: a device with a live credential, and no management tags. */
    public void user(Exchange exchange) {
        String login = field(exchange, "username");
        boolean ok = devices.authenticate(login, field(exchange, "password"));
        answer(exchange, ok, "login", login, "no live credential with that secret");
    }

    /** {@code username}, {@code vhost}: a device still live may open its connection. */
    public void vhost(Exchange exchange) {
        String login = field(exchange, "username");
        DeviceLogin device = DeviceLogin.parse(login);
        answer(exchange, device != null && devices.live(device), "vhost", login,
                "no live credential (vhost " + field(exchange, "vhost") + ")");
    }

    /** {@code resource}, {@code name}, {@code permission}: writing to the two exchanges readings come in by, nothing else. */
    public void resource(Exchange exchange) {
        String login = field(exchange, "username");
        String resource = field(exchange, "resource"), name = field(exchange, "name"), permission = field(exchange, "permission");
        boolean ok = DeviceLogin.parse(login) != null && "exchange".equals(resource) && "write".equals(permission)
                && (readingsExchange.equals(name) || (mqttExchange != null && mqttExchange.equals(name)));
        answer(exchange, ok, "resource", login, permission + " on " + resource + " " + name);
    }

    /** {@code name} (the exchange), {@code permission}, {@code routing_key}: writing readings of its own sensors. */
    public void topic(Exchange exchange) {
        String login = field(exchange, "username");
        String name = field(exchange, "name"), permission = field(exchange, "permission"), key = field(exchange, "routing_key");
        DeviceLogin device = DeviceLogin.parse(login);
        String sensor = !"write".equals(permission) || key == null ? null
                : readingsExchange.equals(name) ? key
                : mqttExchange != null && mqttExchange.equals(name) && key.startsWith(MQTT_PREFIX) ? key.substring(MQTT_PREFIX.length())
                : null;
        boolean ok = device != null && sensor != null && DeviceLogin.SENSOR_ID.matcher(sensor).matches()
                && devices.mayReport(device, sensor);
        answer(exchange, ok, "topic", login, permission + " on " + name + " with key " + key
                + (sensor == null ? "" : ": not a sensor of this device, or its credential is not live"));
    }

    private void answer(Exchange exchange, boolean allowed, String check, String login, String why) {
        if (!allowed) {
            refusals.refuse(check, login, why);
        }
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "text/plain");
        exchange.getMessage().setBody(allowed ? "allow" : "deny");
    }

    /** A form field of the POST: platform-http maps them to headers. */
    private static String field(Exchange exchange, String name) {
        return exchange.getMessage().getHeader(name, String.class);
    }
}
