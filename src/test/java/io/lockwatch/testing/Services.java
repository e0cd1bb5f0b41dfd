package io.lockwatch.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Starts and stops the real services through {@code scripts/services.sh}, for outage tests. */
public final class Services {

    private Services() {
    }

    public static void run(String action, String... services) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", "scripts/services.sh", action));
        command.addAll(List.of(services));
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of("target", "services-" + action + ".log").toFile()).start();
        if (!p.waitFor(180, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("scripts/services.sh " + String.join(" ", command.subList(2, command.size()))
                    + " failed; see target/services-" + action + ".log");
        }
    }
}
