package io.lockwatch.infra.embedded;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.Profiles;

/**
 * The unit tests run in several JVMs side by side (surefire's forks, pom.xml): each JVM's embedded services listen
 * on ports of a band of its own. {@link EmbeddedEnvironmentPostProcessor} picks a free port as a context starts and
 * the service binds it seconds later; a context in another JVM picking the same port in between would fail to start.
 * Runs just before it, and chooses the ports it would have chosen itself (those not configured), from the fork's
 * quarter of the range below the ephemeral ports. Only where surefire names the fork ({@code lockwatch.test.fork=fork2}).
 */
public final class ForkPortBands implements EnvironmentPostProcessor, Ordered {

    static final String FORK = "lockwatch.test.fork";
    private static final int BANDS = 4;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        String fork = System.getProperty(FORK, "").replaceAll("\\D", "");
        if (fork.isEmpty() || !env.acceptsProfiles(Profiles.of(EmbeddedEnvironmentPostProcessor.PROFILE))
                || env.getPropertySources().contains(EmbeddedEnvironmentPostProcessor.PROPERTY_SOURCE)) {
            return;
        }
        int band = Math.floorMod(Integer.parseInt(fork) - 1, BANDS);
        int width = 10_000 / BANDS;
        int low = EmbeddedEnvironmentPostProcessor.ephemeralRangeStart() - 10_000 + band * width;
        Map<String, Object> ports = new java.util.HashMap<>();
        for (String name : new String[] {"postgres-port", "broker-port", "mqtt-port"}) {
            String property = "lockwatch.embedded." + name;
            if (env.getProperty(property, Integer.class, 0) <= 0) {
                ports.put(property, free(low, low + width));
            }
        }
        env.getPropertySources().addFirst(new MapPropertySource("lockwatchTestForkPorts", ports));
    }

    /** As {@link EmbeddedEnvironmentPostProcessor#portOrFree}: never twice in this JVM, and free now. */
    private static int free(int from, int to) {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(from, to);
            if (HANDED_OUT.add(port)) {
                if (EmbeddedEnvironmentPostProcessor.free(port)) {
                    return port;
                }
            }
        }
        throw new IllegalStateException("no free loopback port in " + from + ".." + to + " for an embedded service");
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 1;
    }
}
