package io.lockwatch.adapters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** What a profile's configuration may say, and how it reads a battery said in volts. */
class DeviceProfilesTest {

    private static DeviceProfiles.Profile profile(List<String> adapters, String batteryField, Double empty, Double full) {
        return new DeviceProfiles.Profile(adapters, "door", List.of("1"), List.of("0"), batteryField, null, null,
                Duration.ofHours(2), empty, full);
    }

    @Test
    void aVoltageIsPlacedBetweenEmptyAndFullAndOneFarOutsideIsNoBatteryAtAll() {
        DeviceProfiles.Profile volts = profile(List.of("chirpstack"), "BAT_V", 2.4, 3.0);
        assertThat(volts.batteryPercent(3.05)).isEqualTo(100);
        assertThat(volts.batteryPercent(2.7)).isEqualTo(50);
        assertThat(volts.batteryPercent(2.5)).isEqualTo(16.7);
        assertThat(volts.batteryPercent(2.0)).as("spent, within the range's width below it").isEqualTo(0);
        // millivolts, a percent, nothing at all: not taken for a full or an empty battery
        assertThat(volts.batteryPercent(3050)).isNaN();
        assertThat(volts.batteryPercent(87)).isNaN();
        assertThat(volts.batteryPercent(0)).isNaN();
        assertThat(volts.batteryPercent(Double.POSITIVE_INFINITY)).isNaN();
        assertThat(profile(List.of("zigbee2mqtt"), "battery", null, null).batteryPercent(87)).isEqualTo(87);
    }

    @Test
    void aProfileSaysItsVoltsWholeAndOnlyLoRaWanNetworksShareOne() {
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("chirpstack"), "BAT_V", 2.4, null))))
                .hasMessageContaining("battery-empty-volts and battery-full-volts go together");
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("chirpstack"), "BAT_V", 3.0, 2.4))))
                .hasMessageContaining("full above empty");
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("chirpstack"), "BAT_V", Double.NaN, 3.0))))
                .hasMessageContaining("battery-empty-volts");
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("chirpstack"), null, 2.4, 3.0))))
                .hasMessageContaining("with a battery-field");
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("zigbee2mqtt", "chirpstack"), null, null, null))))
                .hasMessageContaining("only LoRaWAN's");
        assertThatThrownBy(() -> new DeviceProfiles(Map.of("p", profile(List.of("zwave"), null, null, null))))
                .hasMessageContaining("adapter must be one of");
        DeviceProfiles both = new DeviceProfiles(Map.of("p", profile(List.of("chirpstack", "the-things-stack"), null, null, null)));
        assertThat(both.of("the-things-stack")).containsExactly("p");
        assertThat(both.byDevEui("p")).isTrue();
        assertThat(both.heartbeatTimeouts()).containsEntry("p", 7200);
    }
}
