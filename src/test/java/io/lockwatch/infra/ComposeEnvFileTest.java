package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * docker/.env.example names every variable that docker/compose.yaml (and its HA variant) requires ({@code ${NAME:?…}}): a user who copies
 * it and fills it in gets a compose that starts, not one that stops on the first variable the example forgot.
 */
class ComposeEnvFileTest {

    private static final Pattern REQUIRED = Pattern.compile("\\$\\{([A-Z0-9_]+):\\?");
    private static final Pattern ASSIGNED = Pattern.compile("(?m)^([A-Z0-9_]+)=");

    @Test
    void theExampleEnvFileNamesEveryVariableComposeRequires() throws Exception {
        Set<String> required = names(REQUIRED, Files.readString(Path.of("docker/compose.yaml"))
                + Files.readString(Path.of("docker/compose.ha.yaml")));
        Set<String> given = names(ASSIGNED, Files.readString(Path.of("docker/.env.example")));

        assertThat(required).as("compose requires some").isNotEmpty();
        assertThat(given).containsAll(required);
    }

    private static Set<String> names(Pattern pattern, String text) {
        Set<String> names = new TreeSet<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }
}
