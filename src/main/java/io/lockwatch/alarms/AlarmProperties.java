package io.lockwatch.alarms;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Open-door alarms.
 *
 * @param openAfter    a door open longer than this raises an alarm, unless its sensor has {@code open_alarm_seconds}
 *                     of its own; unset (the default): only sensors with their own threshold
 * @param scanInterval how often the clustered scan raises the due alarms and clears those whose door has closed
 * @param scanBatch    alarms raised or cleared per transaction
 */
@ConfigurationProperties("lockwatch.alarms")
record AlarmProperties(Duration openAfter, Duration scanInterval, int scanBatch) {
}
