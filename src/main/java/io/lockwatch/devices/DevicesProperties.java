package io.lockwatch.devices;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Device identity: the credentials sensors and gateways log in with, and the broker asking lockwatch about them.
 *
 * @param credentialGrace    how long a device's credentials stay valid once a newer one was made for it (a
 *                           creation may say otherwise)
 * @param brokerAuthNetworks the addresses (CIDR) RabbitMQ's HTTP auth backend may ask from ({@code /broker-auth/…});
 *                           anyone else is answered 403
 */
@ConfigurationProperties("lockwatch.devices")
public record DevicesProperties(Duration credentialGrace, List<String> brokerAuthNetworks) {

    public DevicesProperties {
        brokerAuthNetworks = brokerAuthNetworks == null ? List.of() : List.copyOf(brokerAuthNetworks);
    }
}
