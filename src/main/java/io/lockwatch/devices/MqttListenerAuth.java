package io.lockwatch.devices;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.function.Supplier;

import io.moquette.broker.security.IAuthenticator;
import io.moquette.broker.security.IAuthorizatorPolicy;
import io.moquette.broker.subscriptions.Topic;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Who may do what on the embedded default's MQTT listener, from the same registry RabbitMQ asks about: a device logs
 * in with a live credential and publishes to {@code lockwatch/readings/<one of its sensors>} only, and subscribes to
 * nothing; the bridge into the readings exchange logs in with a secret made for this run and reads the readings'
 * topics. Without a login (the listener is on loopback only), a client may do what it could before device identity,
 * unless {@code lockwatch.ingest.device-auth} is {@code required}: then the listener refuses it (Moquette's
 * {@code allow_anonymous}, set by the caller).
 */
public final class MqttListenerAuth implements IAuthenticator, IAuthorizatorPolicy {

    public static final String BRIDGE_USER = "lockwatch-bridge";
    /** The bridge's client id (routes/mqtt.camel.yaml): MQTT hands a session to whoever connects with its id last. */
    public static final String BRIDGE_CLIENT_ID = "lockwatch-readings-bridge";
    private static final String TOPIC_PREFIX = "lockwatch/readings/";

    private final Supplier<Devices> devices;
    private final byte[] bridgeSecret;
    private final Refusals refusals;
    private volatile java.util.function.Consumer<String> disconnect = client -> { };

    /** @param devices the registry, once the database is up (the listener starts before it) */
    public MqttListenerAuth(Supplier<Devices> devices, String bridgeSecret, MeterRegistry meters) {
        this.devices = devices;
        this.bridgeSecret = bridgeSecret.getBytes(StandardCharsets.UTF_8);
        this.refusals = new Refusals(meters);
    }

    /**
     * How to drop a client's connection. MQTT 3.1.1 has no refusal of a publish: the listener would drop it unanswered
     * and leave the device waiting for a PUBACK it never gets (and sending it again on every reconnection). Closing
     * the connection tells the device at once, as RabbitMQ's plugin does.
     */
    public void disconnectWith(java.util.function.Consumer<String> disconnect) {
        this.disconnect = disconnect;
    }

    /**
     * Whether a client may connect with this client id, asked before the listener looks at anything else: the
     * bridge's id is the bridge's login's only. Anyone else connecting with it (anonymous on loopback, or a device)
     * would take the bridge's session over, the listener dropping the bridge and its subscription, and readings
     * refused until it reconnected, to be dropped again. The bridge's login itself is then checked as any other.
     */
    public boolean mayConnectAs(String clientId, String username) {
        if (!BRIDGE_CLIENT_ID.equals(clientId) || BRIDGE_USER.equals(username)) {
            return true;
        }
        refusals.refuse("mqtt-login", username, "the bridge's client id is the bridge's own");
        return false;
    }

    @Override
    public boolean checkValid(String clientId, String username, byte[] password) {
        if (BRIDGE_USER.equals(username)) {
            return password != null && MessageDigest.isEqual(password, bridgeSecret);
        }
        boolean ok = password != null && devices.get().authenticate(username, new String(password, StandardCharsets.UTF_8));
        if (!ok) {
            refusals.refuse("mqtt-login", username, "no live credential with that secret");
        }
        return ok;
    }

    @Override
    public boolean canWrite(Topic topic, String user, String client) {
        if (user == null || user.isEmpty()) {
            return true; // anonymous, which only an optional device-auth lets in
        }
        DeviceLogin device = DeviceLogin.parse(user);
        String name = topic.toString();
        String sensor = name.startsWith(TOPIC_PREFIX) ? name.substring(TOPIC_PREFIX.length()) : null;
        boolean ok = device != null && sensor != null && DeviceLogin.SENSOR_ID.matcher(sensor).matches()
                && devices.get().mayReport(device, sensor);
        if (!ok) {
            refusals.refuse("mqtt-publish", user, "may not publish to " + Refusals.printable(name));
            disconnect.accept(client);
        }
        return ok;
    }

    @Override
    public boolean canRead(Topic topic, String user, String client) {
        if (user == null || user.isEmpty() || BRIDGE_USER.equals(user)) {
            return true;
        }
        refusals.refuse("mqtt-subscribe", user, "may not subscribe to " + Refusals.printable(topic.toString()));
        return false;
    }
}
