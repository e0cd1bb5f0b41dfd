package io.lockwatch.infra.embedded;

import java.net.InetAddress;
import java.net.ServerSocket;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

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

    /** MQTT's 1883, as sensors and the README's mosquitto_pub expect, unless it is taken: then a free one, logged. */
    @Test
    void theMqttListenerTakes1883WhenItIsFreeAndSaysWhereItListensOtherwise() throws Exception {
        List<String> logged = new ArrayList<>();
        org.apache.commons.logging.Log log = new org.apache.commons.logging.impl.NoOpLog() {
            @Override
            public void info(Object message) {
                logged.add(String.valueOf(message));
            }
        };
        StandardEnvironment env = new StandardEnvironment();
        env.setActiveProfiles(EmbeddedEnvironmentPostProcessor.PROFILE);
        env.getPropertySources().addFirst(new MapPropertySource("test", Map.of("lockwatch.embedded.data-dir", "target/test-data")));
        new EmbeddedEnvironmentPostProcessor(destination -> log).postProcessEnvironment(env, new SpringApplication());
        if (EmbeddedEnvironmentPostProcessor.free(1883)) {
            assertThat(env.getProperty("lockwatch.mqtt.broker-url")).isEqualTo("tcp://127.0.0.1:1883");
            assertThat(logged).isEmpty();
        } else {
            // held by another service on this machine: what that looks like is the case below
            assertThat(logged).singleElement().asString().contains("1883 is taken")
                    .endsWith(env.getProperty("lockwatch.mqtt.broker-url") + " instead");
        }

        logged.clear();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int instead = new EmbeddedEnvironmentPostProcessor(destination -> log).mqttPort(taken.getLocalPort());
            assertThat(instead).isNotEqualTo(taken.getLocalPort());
            assertThat(logged).singleElement().asString()
                    .isEqualTo("lockwatch.embedded.mqtt-port " + taken.getLocalPort() + " is taken: the embedded MQTT "
                            + "listener listens on tcp://127.0.0.1:" + instead + " instead");
        }
    }

    @Test
    void aConfiguredPortIsKept() {
        assertThat(EmbeddedEnvironmentPostProcessor.portOrFree(15_672)).isEqualTo(15_672);
    }
}
