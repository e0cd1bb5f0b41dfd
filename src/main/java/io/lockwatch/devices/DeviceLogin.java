package io.lockwatch.devices;

import java.util.regex.Pattern;

/**
 * What a device logs in as: {@code sensor.<id>} for a sensor's own credential, {@code gateway.<id>} for a gateway's.
 * The prefixes say by its form alone whose a login is, so a broker's own user (the service's, an operator's) is never
 * taken for a device, nor a sensor for a gateway.
 *
 * @param sensorId  the sensor whose own login this is, else null
 * @param gatewayId the gateway whose login this is, else null
 */
public record DeviceLogin(String sensorId, String gatewayId) {

    static final String SENSOR_PREFIX = "sensor.", GATEWAY_PREFIX = "gateway.";

    /** The servlet request attribute that names the device an HTTP request came from, once its credential is checked. */
    public static final String REQUEST_ATTRIBUTE = "io.lockwatch.device";
    static final Pattern SENSOR_ID = Pattern.compile("[0-9A-Za-z]{1,16}");
    /** A gateway's id, as V28 and the contract's GatewayId have it. */
    public static final Pattern GATEWAY_ID = Pattern.compile("[0-9A-Za-z][0-9A-Za-z_-]{0,63}");

    /** The login of this form, or null when it is no device's (an internal user of the broker, say). */
    public static DeviceLogin parse(String login) {
        if (login == null) {
            return null;
        }
        if (login.startsWith(GATEWAY_PREFIX)) {
            String id = login.substring(GATEWAY_PREFIX.length());
            return GATEWAY_ID.matcher(id).matches() ? new DeviceLogin(null, id) : null;
        }
        if (login.startsWith(SENSOR_PREFIX)) {
            String id = login.substring(SENSOR_PREFIX.length());
            return SENSOR_ID.matcher(id).matches() ? new DeviceLogin(id, null) : null;
        }
        return null;
    }

    public static DeviceLogin ofGateway(String gatewayId) {
        return new DeviceLogin(null, gatewayId);
    }

    public static DeviceLogin ofSensor(String sensorId) {
        return new DeviceLogin(sensorId, null);
    }

    public boolean gateway() {
        return gatewayId != null;
    }

    /** As the device types it. */
    public String text() {
        return gateway() ? GATEWAY_PREFIX + gatewayId : SENSOR_PREFIX + sensorId;
    }

    @Override
    public String toString() {
        return text();
    }
}
