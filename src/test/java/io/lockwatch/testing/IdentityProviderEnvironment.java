package io.lockwatch.testing;

import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Every test context signs people in at the test JVM's {@link IdentityProvider}, beside its tokens and keys: so that
 * a person's token is tested beside every other feature, not in a context of its own.
 */
public final class IdentityProviderEnvironment implements EnvironmentPostProcessor {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        if (env.containsProperty("lockwatch.sso.issuer")) {
            return; // a test that names its own (or none: an empty value)
        }
        IdentityProvider provider = IdentityProvider.get();
        env.getPropertySources().addLast(new MapPropertySource("lockwatchTestIdentityProvider", Map.of(
                "lockwatch.sso.issuer", provider.issuer(), "lockwatch.sso.audience", IdentityProvider.AUDIENCE)));
    }
}
