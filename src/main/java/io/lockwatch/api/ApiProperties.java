package io.lockwatch.api;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may use the API (and Hawtio, and Jolokia).
 *
 * @param tokens      bearer tokens that may do everything (several, so one can be rotated at a time)
 * @param readTokens  bearer tokens that may only read (GET), e.g. for dashboards
 */
@ConfigurationProperties("lockwatch.api")
public record ApiProperties(List<String> tokens, List<String> readTokens) {

    public ApiProperties {
        tokens = tokens == null ? List.of() : tokens.stream().filter(t -> t != null && !t.isBlank()).toList();
        readTokens = readTokens == null ? List.of() : readTokens.stream().filter(t -> t != null && !t.isBlank()).toList();
    }
}
