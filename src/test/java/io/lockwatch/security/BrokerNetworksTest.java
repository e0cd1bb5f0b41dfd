package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.web.access.intercept.RequestAuthorizationContext;

/** RabbitMQ's auth questions are taken from its networks only, by the peer's address. */
class BrokerNetworksTest {

    @Test
    void onlyAPeerInTheNetworksMayAsk() {
        var networks = SecurityConfiguration.fromNetworks(List.of("127.0.0.0/8", " 10.0.0.0/8", "fc00::/7", ""));
        assertThat(granted(networks, "127.0.0.1", null)).isTrue();
        assertThat(granted(networks, "10.1.2.3", null)).isTrue();
        assertThat(granted(networks, "fd00::5", null)).isTrue();
        assertThat(granted(networks, "192.0.2.7", null)).isFalse();
        assertThat(granted(networks, "::1", null)).isFalse();
        assertThat(granted(networks, "192.0.2.7", "127.0.0.1")).as("a forwarded-for header is not believed").isFalse();
        assertThat(granted(SecurityConfiguration.fromNetworks(List.of()), "127.0.0.1", null)).as("none: nobody").isFalse();
    }

    private static boolean granted(org.springframework.security.authorization.AuthorizationManager<RequestAuthorizationContext> m,
                                   String peer, String forwardedFor) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/broker-auth/user");
        request.setRemoteAddr(peer);
        if (forwardedFor != null) {
            request.addHeader("X-Forwarded-For", forwardedFor);
        }
        return m.check(() -> null, new RequestAuthorizationContext(request)).isGranted();
    }
}
