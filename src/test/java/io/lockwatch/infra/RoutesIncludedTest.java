package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * The jar's routes are named one by one in application.yaml (a wildcard costs a read of the whole packaged jar at
 * every start): a route file added to routes/ and not to that list would silently not run.
 */
class RoutesIncludedTest {

    @Test
    void everyRouteFileOfTheJarIsIncludedByName() throws IOException {
        List<String> files = Arrays.stream(new PathMatchingResourcePatternResolver().getResources("classpath:routes/*.camel.yaml"))
                .map(Resource::getFilename).sorted().toList();
        assertThat(files).hasSizeGreaterThan(10);

        // Camel takes each entry as it is, a space included
        assertThat(includePattern()).doesNotContainPattern("\\s");
        List<String> included = List.of(includePattern().split(","));

        assertThat(included).filteredOn(p -> p.startsWith("classpath:"))
                .containsExactlyElementsOf(files.stream().map(f -> "classpath:routes/" + f).toList());
        assertThat(included).filteredOn(p -> !p.startsWith("classpath:"))
                .containsExactly("file:${lockwatch.routes.dir}/*.camel.yaml");
    }

    @Test
    void withoutTheRoutesDirectoryTheJarsRoutesAreStillIncluded() throws IOException {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addLast(applicationYaml());
        env.getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("lockwatch.routes.dir", "/proc/no-such-directory/routes")));

        new RoutesDirectory().postProcessEnvironment(env, null);

        String pattern = env.getProperty("camel.main.routes-include-pattern");
        assertThat(pattern).doesNotContain("file:").doesNotContainPattern("\\s").contains("classpath:routes/ingest.camel.yaml");
        assertThat(pattern.split(",")).hasSize((int) Arrays.stream(includePattern().split(","))
                .filter(p -> p.startsWith("classpath:")).count());
        assertThat(env.getProperty("camel.main.routes-reload-enabled")).isEqualTo("false");
    }

    private static String includePattern() throws IOException {
        return (String) applicationYaml().getProperty("camel.main.routes-include-pattern");
    }

    private static PropertySource<?> applicationYaml() throws IOException {
        return new YamlPropertySourceLoader().load("application.yaml", new ClassPathResource("application.yaml")).get(0);
    }
}
