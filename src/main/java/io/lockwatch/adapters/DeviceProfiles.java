package io.lockwatch.adapters;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Device profiles: how a network's messages say a door's state and its device's health. A sensor names its profile
 * and its id on the network ({@code profile}, {@code device_id}); the profile's adapter takes that network's messages
 * and reads them by the profile. The built-in profiles are in application.yaml; an operator adds one by configuration.
 *
 * @param profiles device profiles by name (docs/devices.md): the built-in ones (zigbee2mqtt, dragino-lds02,
 *                 milesight-ws301, shelly-door-window) and an operator's own, each {@code lockwatch.profiles.<name>.adapter},
 *                 {@code door-field}, {@code closed-when}, {@code open-when}, {@code battery-field},
 *                 {@code tamper-field}, {@code tamper-when}, {@code battery-empty-volts}, {@code battery-full-volts},
 *                 {@code heartbeat-timeout}
 */
@ConfigurationProperties("lockwatch")
public record DeviceProfiles(Map<String, Profile> profiles) {

    /**
     * A profile.
     *
     * @param adapter      the network whose adapter takes its devices' messages ({@code zigbee2mqtt},
     *                     {@code shelly}), or the LoRaWAN networks that may carry them ({@code chirpstack},
     *                     {@code the-things-stack}: a device is known by its DevEUI on either)
     * @param doorField    the field of a device's message that holds its door (or contact, or lock)
     * @param closedWhen   the field's values that mean closed: text ({@code LOCK}), {@code true}, or a number (1 is
     *                     also 1.0, as ChirpStack's codecs' numbers come)
     * @param openWhen     the field's values that mean open; any other value is no door reading
     * @param batteryField the field that holds the battery in percent (0 to 100); unset: none
     * @param tamperField  the field that holds the tamper switch (true while the cover is open); unset: none
     * @param tamperWhen   the tamper field's values that mean tampered (any other: not); unset: the field is a
     *                     boolean
     * @param heartbeatTimeout how long its devices may stay silent before they are lost, for each of its sensors
     *                     that sets no timeout of its own (a device that reports once a day needs more than the
     *                     service's hour); unset: the service's default
     * @param batteryEmptyVolts with {@code batteryFullVolts}: the battery field says volts, kept as the percent of
     *                     the way from empty (0 %) to full (100 %); unset: it says percent
     * @param batteryFullVolts the voltage of a full battery
     */
    public record Profile(List<String> adapter, String doorField, List<String> closedWhen, List<String> openWhen,
                          String batteryField, String tamperField, List<String> tamperWhen,
                          java.time.Duration heartbeatTimeout, Double batteryEmptyVolts, Double batteryFullVolts) {

        /**
         * The battery field's value in percent: as it is, or its volts placed between empty and full (0 to 100);
         * a voltage farther than the range's width beyond either end (millivolts, a percent, a broken reading) is
         * no battery at all (NaN), not an empty or a full one.
         */
        public double batteryPercent(double said) {
            if (batteryEmptyVolts == null) {
                return said;
            }
            double range = batteryFullVolts - batteryEmptyVolts;
            if (!(said >= batteryEmptyVolts - range && said <= batteryFullVolts + range)) {
                return Double.NaN;
            }
            double percent = (said - batteryEmptyVolts) / range * 100;
            return Math.round(Math.max(0, Math.min(100, percent)) * 10) / 10.0;
        }
    }

    /** The adapters of LoRaWAN networks, where a device is known by its DevEUI. */
    static final List<String> LORAWAN = List.of(ChirpStackAdapter.NAME, TheThingsStackAdapter.NAME);
    static final List<String> ADAPTERS = List.of(Zigbee2MqttAdapter.NAME, ChirpStackAdapter.NAME,
            TheThingsStackAdapter.NAME, ShellyAdapter.NAME);

    public DeviceProfiles {
        profiles = profiles == null ? Map.of() : new TreeMap<>(profiles);
        profiles.forEach((name, p) -> {
            if (p.adapter() == null || p.adapter().isEmpty() || !ADAPTERS.containsAll(p.adapter())) {
                throw new IllegalArgumentException("lockwatch.profiles." + name + ".adapter must be one of "
                        + ADAPTERS + ", not " + p.adapter());
            }
            if (p.adapter().size() > 1 && !LORAWAN.containsAll(p.adapter())) {
                throw new IllegalArgumentException("lockwatch.profiles." + name + ".adapter names several networks: "
                        + "only LoRaWAN's (" + LORAWAN + ") may share a profile, their devices known by DevEUI");
            }
            if (p.doorField() == null || p.closedWhen() == null || p.openWhen() == null || p.closedWhen().isEmpty()
                    || p.openWhen().isEmpty() || p.closedWhen().stream().anyMatch(p.openWhen()::contains)) {
                throw new IllegalArgumentException("lockwatch.profiles." + name
                        + " needs a door-field and two different values, closed-when and open-when");
            }
            if ((p.batteryEmptyVolts() == null) != (p.batteryFullVolts() == null) || (p.batteryEmptyVolts() != null
                    && (p.batteryField() == null || !Double.isFinite(p.batteryEmptyVolts())
                        || !Double.isFinite(p.batteryFullVolts()) || !(p.batteryEmptyVolts() >= 0)
                        || !(p.batteryFullVolts() > p.batteryEmptyVolts())))) {
                throw new IllegalArgumentException("lockwatch.profiles." + name + ": battery-empty-volts and "
                        + "battery-full-volts go together, with a battery-field, and full above empty");
            }
            if (p.heartbeatTimeout() != null && (p.heartbeatTimeout().toSeconds() < 1
                    || p.heartbeatTimeout().toSeconds() > Integer.MAX_VALUE)) {
                throw new IllegalArgumentException("lockwatch.profiles." + name
                        + ".heartbeat-timeout must be a second or more");
            }
        });
    }

    public boolean known(String name) {
        return profiles.containsKey(name);
    }

    /** The names of the profiles this adapter reads. */
    public List<String> of(String adapter) {
        return profiles.entrySet().stream().filter(e -> e.getValue().adapter().contains(adapter)).map(Map.Entry::getKey).toList();
    }

    /** Whether the profile's devices are LoRaWAN's, each known by its DevEUI (16 hex digits). */
    public boolean byDevEui(String name) {
        return LORAWAN.containsAll(profiles.get(name).adapter());
    }

    /** The heartbeat timeouts in seconds of the profiles that set one, by profile. */
    public Map<String, Integer> heartbeatTimeouts() {
        Map<String, Integer> timeouts = new TreeMap<>();
        profiles.forEach((name, p) -> {
            if (p.heartbeatTimeout() != null) {
                timeouts.put(name, (int) p.heartbeatTimeout().toSeconds());
            }
        });
        return timeouts;
    }

    public Profile profile(String name) {
        return profiles.get(name);
    }
}
