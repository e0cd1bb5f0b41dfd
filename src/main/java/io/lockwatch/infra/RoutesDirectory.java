package io.lockwatch.infra;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Makes sure the operator's routes directory ({@code lockwatch.routes.dir}) exists before Camel watches it; if it
 * cannot be created (a read-only file system), live reloading is switched off instead of failing the start.
 */
public class RoutesDirectory implements EnvironmentPostProcessor, Ordered {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        String dir = env.getProperty("lockwatch.routes.dir");
        if (dir == null || dir.isBlank()) {
            return;
        }
        try {
            Files.createDirectories(Path.of(dir));
        } catch (IOException | RuntimeException e) {
            env.getPropertySources().addFirst(new MapPropertySource("lockwatchNoRoutesDirectory",
                    Map.of("camel.main.routes-reload-enabled", "false",
                            "camel.main.routes-include-pattern", "classpath:routes/*.camel.yaml")));
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
