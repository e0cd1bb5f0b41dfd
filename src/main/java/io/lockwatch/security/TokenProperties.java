package io.lockwatch.security;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who may use lockwatch's HTTP doors with a static token (machines: scripts, dashboards, the bench): the API, the
 * actuator, Jolokia and Hawtio. People sign in at the identity provider instead, where one is set
 * ({@link SsoProperties}).
 *
 * @param tokens              bearer tokens that may do everything (several, so one can be rotated at a time); each is
 *                            named by its place, {@code full-token-1} and on
 * @param readTokens          bearer tokens that may only read, e.g. for dashboards ({@code read-token-1} and on)
 * @param namedTokens         tokens by the name the audit log gives them, each with its role ({@code full} or
 *                            {@code read}): {@code lockwatch.api.named-tokens.bench.token=…}, {@code ….role=read}
 * @param staticTokensEnabled false: none of the above is taken (people sign in at the identity provider; client keys
 *                            and devices' credentials are not static tokens and still work)
 */
@ConfigurationProperties("lockwatch.api")
record TokenProperties(List<String> tokens, List<String> readTokens, Map<String, NamedToken> namedTokens,
                       Boolean staticTokensEnabled) {

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

    /** A static token with a name of its own. */
    record NamedToken(String token, String role) {
    }

    TokenProperties {
        tokens = tokens == null ? List.of() : tokens.stream().filter(t -> t != null && !t.isBlank()).toList();
        readTokens = readTokens == null ? List.of() : readTokens.stream().filter(t -> t != null && !t.isBlank()).toList();
        namedTokens = namedTokens == null ? Map.of() : Map.copyOf(namedTokens);
        staticTokensEnabled = staticTokensEnabled == null || staticTokensEnabled;
        namedTokens.forEach((name, t) -> {
            if (!NAME.matcher(name).matches() || name.startsWith("full-token-") || name.startsWith("read-token-")
                    || name.startsWith("client-key-") || name.equals("anonymous")) {
                throw new IllegalStateException("lockwatch.api.named-tokens." + name + ": a name is 1 to 64 lower-case letters, "
                        + "digits and '-', and not one lockwatch gives (full-token-N, read-token-N, client-key-…, anonymous)");
            }
            if (t == null || t.token() == null || t.token().isBlank()) {
                throw new IllegalStateException("lockwatch.api.named-tokens." + name + ".token is empty");
            }
            if (!"full".equals(t.role()) && !"read".equals(t.role())) {
                throw new IllegalStateException("lockwatch.api.named-tokens." + name + ".role must be full or read");
            }
        });
    }

    /** Every static token taken, with its name and whether it is full; none when they are off. */
    List<Named> all() {
        if (!staticTokensEnabled) {
            return List.of();
        }
        List<Named> all = new java.util.ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            all.add(new Named("full-token-" + (i + 1), tokens.get(i), true));
        }
        for (int i = 0; i < readTokens.size(); i++) {
            all.add(new Named("read-token-" + (i + 1), readTokens.get(i), false));
        }
        new java.util.TreeMap<>(namedTokens).forEach((name, t) -> all.add(new Named(name, t.token(), "full".equals(t.role()))));
        return all;
    }

    record Named(String name, String token, boolean full) {
    }
}
