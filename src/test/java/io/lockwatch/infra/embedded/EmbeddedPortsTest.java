package io.lockwatch.infra.embedded;

import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A free port for an embedded service is one no outgoing connection can take before the service binds it. */
class EmbeddedPortsTest {

    @Test
    void aFreePortIsChosenBelowTheRangeOfOutgoingConnections() throws Exception {
        int below = EmbeddedEnvironmentPostProcessor.ephemeralRangeStart();
        java.util.Set<Integer> chosen = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            int port = EmbeddedEnvironmentPostProcessor.portOrFree(0);
            // never the same port twice in one JVM: an earlier context may still hold it, or its connections linger
            assertThat(chosen.add(port)).as("port %d chosen again", port).isTrue();
            assertThat(port).isBetween(below - 10_000, below - 1);
            try (ServerSocket bound = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertThat(bound.getLocalPort()).isEqualTo(port);
            }
        }
    }

    @Test
    void aConfiguredPortIsKept() {
        assertThat(EmbeddedEnvironmentPostProcessor.portOrFree(15_672)).isEqualTo(15_672);
    }
}
