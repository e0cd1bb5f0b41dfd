package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * Every lockwatch.* property has IDE completion and a description (the configuration processor's metadata, merged
 * with META-INF/additional-spring-configuration-metadata.json for the properties no properties class binds), and the
 * README's configuration table lists exactly those properties: a property added to one and not the other fails here.
 */
class ConfigurationMetadataTest {

    private static final Pattern README_ROW = Pattern.compile("(?m)^\\| `(lockwatch\\.[a-z0-9.-]+)`");

    @Test
    void everyPropertyHasADescriptionAndTheReadmeListsEachOfThem() throws IOException {
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
        TreeSet<String> inReadme = new TreeSet<>();
        Matcher m = README_ROW.matcher(Files.readString(Path.of("README.md")));
        while (m.find()) {
            inReadme.add(m.group(1));
        }

        assertThat(described).as("properties known to the metadata").isNotEmpty();
        assertThat(described).allSatisfy((name, description) -> assertThat(description).as(name).isNotBlank());
        assertThat(inReadme).as("the README's configuration table").containsExactlyElementsOf(described.keySet());
    }
}
