package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * Every lockwatch.* property has IDE completion and a description (the configuration processor's metadata, merged
 * with META-INF/additional-spring-configuration-metadata.json for the properties no properties class binds); the
 * reference page docs/configuration.md is generated from that metadata (io.lockwatch.docs.ConfigurationReferenceTest).
 */
class ConfigurationMetadataTest {

    @Test
    void everyPropertyHasADescription() throws IOException {
        Map<String, String> described = new TreeMap<>();
        for (String resource : new String[] {"META-INF/spring-configuration-metadata.json",
                "META-INF/additional-spring-configuration-metadata.json"}) {
            try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
                assertThat(in).as(resource).isNotNull();
                for (JsonNode p : new ObjectMapper().readTree(in).path("properties")) {
                    String name = p.path("name").asText();
                    if (name.startsWith("lockwatch.")) {
                        described.put(name, p.path("description").asText(""));
                    }
                }
            }
        }
        assertThat(described).as("properties known to the metadata").isNotEmpty();
        assertThat(described).allSatisfy((name, description) -> assertThat(description).as(name).isNotBlank());
    }
}
