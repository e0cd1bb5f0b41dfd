package io.lockwatch.maintenance;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Maintenance windows.
 *
 * @param scanInterval how often the clustered scan releases the windows that have ended
 * @param releaseBatch held sensors released per transaction
 */
@ConfigurationProperties("lockwatch.maintenance")
record MaintenanceProperties(Duration scanInterval, int releaseBatch) {
}
