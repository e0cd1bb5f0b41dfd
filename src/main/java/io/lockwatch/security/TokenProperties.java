package io.lockwatch.security;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may use lockwatch's HTTP doors: the API, the actuator, Jolokia and Hawtio.
 *
 * @param tokens      bearer tokens that may do everything (several, so one can be rotated at a time)
 * @param readTokens  bearer tokens that may only read, e.g. for dashboards
 */
@ConfigurationProperties("lockwatch.api")
record TokenProperties(List<String> tokens, List<String> readTokens) {

    TokenProperties {
        tokens = tokens == null ? List.of() : tokens.stream().filter(t -> t != null && !t.isBlank()).toList();
        readTokens = readTokens == null ? List.of() : readTokens.stream().filter(t -> t != null && !t.isBlank()).toList();
    }
}
