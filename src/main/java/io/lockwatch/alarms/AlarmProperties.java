package io.lockwatch.alarms;

import java.time.Duration;
import java.util.Set;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Alarms: a door left open, a battery running low, a tamper switch.
 *
 * @param openAfter            a door open longer than this raises an alarm, unless its sensor has
 *                             {@code open_alarm_seconds} of its own; unset (the default): only sensors with their own
 *                             threshold
 * @param scanInterval         how often the clustered scan raises the due alarms and clears those whose door has closed
 * @param scanBatch            alarms raised or cleared per transaction
 * @param batteryLowPercent    a battery reported at or below this (percent) raises a battery_low alarm; 0: never
 * @param batteryLowHysteresis the points above the threshold the battery must be back at to clear the alarm, so that
 *                             a battery hovering at the threshold raises it once
 * @param batteryLowSeverity   the severity of a battery_low alarm
 * @param tamperSeverity       the severity of a tampered alarm
 */
@ConfigurationProperties("lockwatch.alarms")
record AlarmProperties(Duration openAfter, Duration scanInterval, int scanBatch, int batteryLowPercent,
                       int batteryLowHysteresis, String batteryLowSeverity, String tamperSeverity) {

    private static final Set<String> SEVERITIES = Set.of("critical", "major", "minor", "warning");

    AlarmProperties {
        if (batteryLowPercent < 0 || batteryLowPercent > 100) {
            throw new IllegalArgumentException("lockwatch.alarms.battery-low-percent must be 0 to 100, not " + batteryLowPercent);
        }
        if (batteryLowHysteresis < 0 || batteryLowPercent + batteryLowHysteresis > 100) {
            throw new IllegalArgumentException("lockwatch.alarms.battery-low-hysteresis must be 0 or more, and at most "
                    + (100 - batteryLowPercent) + " with battery-low-percent " + batteryLowPercent);
        }
        for (String severity : new String[] {batteryLowSeverity, tamperSeverity}) {
            if (!SEVERITIES.contains(severity)) {
                throw new IllegalArgumentException("an alarm severity is one of " + SEVERITIES + ", not " + severity);
            }
        }
    }
}
