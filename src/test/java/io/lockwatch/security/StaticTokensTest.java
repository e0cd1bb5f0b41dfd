package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;

/** Static tokens for machines: named, limited to reading, or turned off altogether where people sign in. */
class StaticTokensTest {

    @Test
    void aNamedTokenIsCalledByItsNameAndMayBeLimitedToReading() {
        TokenAuthentication tokens = new TokenAuthentication(new TokenProperties(List.of("f1"), List.of("r1"),
                Map.of("bench", new TokenProperties.NamedToken("b-secret", "read"),
                        "deploy", new TokenProperties.NamedToken("d-secret", "full")), null));
        assertThat(who(tokens, "f1").getName()).isEqualTo("full-token-1");
        assertThat(who(tokens, "r1").getName()).isEqualTo("read-token-1");
        Authentication bench = who(tokens, "b-secret");
        assertThat(bench.getName()).isEqualTo("bench");
        assertThat(List.copyOf(bench.getAuthorities())).isEqualTo(Caller.READ.authorities());
        assertThat(List.copyOf(who(tokens, "d-secret").getAuthorities())).isEqualTo(Caller.FULL.authorities());
    }

    @Test
    void turnedOffNoStaticTokenIsTaken() {
        TokenAuthentication tokens = new TokenAuthentication(new TokenProperties(List.of("f1"), List.of("r1"),
                Map.of("bench", new TokenProperties.NamedToken("b-secret", "full")), false));
        for (String t : List.of("f1", "r1", "b-secret")) {
            assertThatThrownBy(() -> who(tokens, t)).isInstanceOf(BadCredentialsException.class);
        }
    }

    @Test
    void aNameLockwatchGivesOrARoleItDoesNotKnowIsRefusedAtStart() {
        for (Map.Entry<String, TokenProperties.NamedToken> wrong : List.of(
                Map.entry("full-token-3", new TokenProperties.NamedToken("x", "full")),
                Map.entry("anonymous", new TokenProperties.NamedToken("x", "full")),
                Map.entry("Bench", new TokenProperties.NamedToken("x", "full")),
                Map.entry("bench", new TokenProperties.NamedToken("x", "admin")),
                Map.entry("bench", new TokenProperties.NamedToken(" ", "read")))) {
            assertThatThrownBy(() -> new TokenProperties(List.of(), List.of(), Map.ofEntries(wrong), null))
                    .as(wrong.toString()).isInstanceOf(IllegalStateException.class).hasMessageContaining("lockwatch.api.named-tokens");
        }
    }

    private static Authentication who(TokenAuthentication tokens, String token) {
        return tokens.authenticate(UsernamePasswordAuthenticationToken.unauthenticated(null, token));
    }
}
