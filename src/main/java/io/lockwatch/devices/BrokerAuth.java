package io.lockwatch.devices;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RabbitMQ's HTTP auth backend asking who a device is and what it may do ({@code routes/devices.camel.yaml}). The
 * broker tries its own users first, so only device logins reach here; a device may log in with a live credential,
 * write to the readings exchange (AMQP, routing key = the sensor) or to the MQTT plugin's exchange (routing key
 * {@code lockwatch.readings.<sensor>}) for its own sensors, and nothing else: it reads and declares nothing, so it
 * subscribes to nothing. Each refusal is counted ({@code lockwatch.devices.refused}, by check) and logged, at most a
 * line a second for each check.
 */
public class BrokerAuth {

    private static final Logger log = LoggerFactory.getLogger(BrokerAuth.class);
    private static final String MQTT_PREFIX = "lockwatch.readings.";

    private final Devices devices;
    private final String readingsExchange;
    private final String mqttExchange;
    private final Map<String, Counter> refused = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> lastLogged = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> unlogged = new ConcurrentHashMap<>();
    private final MeterRegistry meters;

    public BrokerAuth(Devices devices, String readingsExchange, String mqttExchange, MeterRegistry meters) {
        this.devices = devices;
        this.readingsExchange = readingsExchange;
        this.mqttExchange = mqttExchange;
        this.meters = meters;
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
            refused.computeIfAbsent(check, c -> Counter.builder("lockwatch.devices.refused")
                    .description("what RabbitMQ asked of lockwatch for a device, and was refused").tag("check", c)
                    .register(meters)).increment();
            logRefusal(check, login, why);
        }
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "text/plain");
        exchange.getMessage().setBody(allowed ? "allow" : "deny");
    }

    /** A device (or someone) trying again and again must not fill the log: a line a second per check, with the count. */
    private void logRefusal(String check, String login, String why) {
        long now = System.currentTimeMillis();
        AtomicLong last = lastLogged.computeIfAbsent(check, c -> new AtomicLong());
        AtomicLong skipped = unlogged.computeIfAbsent(check, c -> new AtomicLong());
        long before = last.get();
        if (now - before >= 1000 && last.compareAndSet(before, now)) {
            long more = skipped.getAndSet(0);
            log.warn("Broker refused {} for {}: {}{}", check, printable(login), why,
                    more == 0 ? "" : " (and " + more + " more refusals of " + check + " in the last " + (now - before) / 1000 + " s)");
        } else {
            skipped.incrementAndGet();
        }
    }

    /** A login is whatever a device typed: kept short and printable in the log. */
    private static String printable(String login) {
        if (login == null) {
            return "(none)";
        }
        String cut = login.length() > 80 ? login.substring(0, 80) + "…" : login;
        return cut.replaceAll("[^\\x20-\\x7E…]", "?");
    }

    /** A form field of the POST (platform-http maps them to headers), or of the query of a GET. */
    private static String field(Exchange exchange, String name) {
        return exchange.getMessage().getHeader(name, String.class);
    }
}
