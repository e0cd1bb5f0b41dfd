package io.lockwatch.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;

import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md is what the configuration metadata and application.yaml give: a property added, renamed,
 * described or given another default without the page regenerated fails here. With -Dlockwatch.docs.write=true it
 * writes the page instead (the regenerate command).
 */
class ConfigurationReferenceTest {

    @Test
    void theCheckedInPageIsWhatTheMetadataGives() throws IOException {
        String generated = ConfigurationReference.render();
        if (Boolean.getBoolean("lockwatch.docs.write")) {
            Files.writeString(ConfigurationReference.PAGE, generated);
        }
        assertThat(generated).contains("| `lockwatch.ingest.batch-size` |");
        assertThat(Files.readString(ConfigurationReference.PAGE))
                .as("%s differs from what the configuration metadata gives; regenerate it: %s",
                        ConfigurationReference.PAGE, ConfigurationReference.REGENERATE)
                .isEqualTo(generated);
    }
}
