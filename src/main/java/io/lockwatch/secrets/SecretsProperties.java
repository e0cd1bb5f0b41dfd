package io.lockwatch.secrets;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * @param keys the keys webhook secrets are sealed with at rest, {@code <id>:<base64 of 32 bytes>} each, the newest
 *             first (comma-separated in {@code LOCKWATCH_SECRETS_KEYS}); required unless the embedded default
 *             keeps a key of its own in its data directory
 */
@ConfigurationProperties("lockwatch.secrets")
record SecretsProperties(List<String> keys) {

    SecretsProperties {
        keys = keys == null ? List.of() : keys.stream().map(String::trim).filter(k -> !k.isEmpty()).toList();
    }
}
