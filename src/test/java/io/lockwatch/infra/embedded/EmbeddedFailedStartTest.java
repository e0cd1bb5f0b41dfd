package io.lockwatch.infra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import io.lockwatch.LockwatchApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The embedded services start as the context is prepared, before any bean exists: a context that then fails to
 * start stops them, and deletes an ephemeral data directory, as a context that stops does.
 */
class EmbeddedFailedStartTest {

    @TempDir Path dataDir;

    @Test
    void aStartThatFailsAfterTheServicesStartedLeavesNeitherRunning() throws Exception {
        assertThatThrownBy(() -> new SpringApplicationBuilder(LockwatchApplication.class).run(
                "--server.port=0",
                "--lockwatch.embedded.data-dir=" + dataDir,
                "--lockwatch.embedded.ephemeral=true",
                // refused by a bean created long after the services were started
                "--lockwatch.ingest.device-auth=sometimes",
                "--spring.quartz.scheduler-name=lockwatch-failed-start-" + System.nanoTime()))
                .hasStackTraceContaining("lockwatch.ingest.device-auth is optional or required");

        try (Stream<Path> left = Files.list(dataDir)) {
            assertThat(left).as("the ephemeral data directory, deleted once both services stopped").isEmpty();
        }
        assertThat(ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains(dataDir.toString())).orElse(false)))
                .as("no postmaster left on that directory").isEmpty();
    }
}
