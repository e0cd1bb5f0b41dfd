package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.DefaultBootstrapContext;
import org.springframework.boot.context.config.ConfigDataEnvironmentPostProcessor;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.DefaultResourceLoader;

/** The settings each profile resolves to, as Spring Boot reads application.yaml, without starting anything. */
class ProfileSettingsTest {

    @Test
    void liveRouteReloadIsOnInTheEmbeddedProfileOnly() {
        assertThat(resolve("embedded").getProperty("camel.main.routes-reload-enabled", Boolean.class)).isTrue();
        assertThat(resolve("external").getProperty("camel.main.routes-reload-enabled", Boolean.class)).isFalse();
    }

    @Test
    void healthShowsItsDetailsOnlyToATokenAndUnsafeJolokiaOperationsAreOff() {
        for (String profile : new String[] {"embedded", "external"}) {
            StandardEnvironment env = resolve(profile);
            assertThat(env.getProperty("management.endpoint.health.show-details")).isEqualTo("when-authorized");
            assertThat(env.getProperty("management.endpoint.health.roles")).as("an operator's token's, not any caller's")
                    .isEqualTo("READ");
            assertThat(env.getProperty("lockwatch.management.allow-unsafe-operations", Boolean.class)).isFalse();
            assertThat(env.getProperty("hawtio.disableProxy", Boolean.class)).isTrue();
            assertThat(env.getProperty("management.endpoint.jolokia.config.disabledServices"))
                    .contains("org.jolokia.service.jsr160.Jsr160RequestHandler");
        }
    }

    /** The embedded default listens on loopback and answers its names only; a deployment names its own. */
    @Test
    void theEmbeddedDefaultAnswersOnlyLoopbacksHostNames() {
        assertThat(resolve("embedded").getProperty("lockwatch.http.allowed-hosts")).isEqualTo("localhost,127.0.0.1,[::1]");
        assertThat(resolve("embedded").getProperty("server.address")).isEqualTo("127.0.0.1");
        assertThat(resolve("external").getProperty("lockwatch.http.allowed-hosts")).isEmpty();
    }

    private static StandardEnvironment resolve(String profile) {
        StandardEnvironment env = new StandardEnvironment();
        env.setActiveProfiles(profile);
        ConfigDataEnvironmentPostProcessor.applyTo(env, new DefaultResourceLoader(), new DefaultBootstrapContext());
        return env;
    }
}
