package io.lockwatch.infra;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The operator's routes directory ({@code lockwatch.routes.dir}): made sure to exist before Camel watches it (if it
 * cannot be created, on a read-only file system, live reloading is switched off instead of failing the start); and
 * refused, with the start, when anyone but its owner may write it or a route file in it. A route runs code with the
 * service's rights (and reaches its database and secrets), so a directory others can write would hand them that.
 * Checked at start; the directory's owner keeps it so afterwards.
 */
public class RoutesDirectory implements EnvironmentPostProcessor, Ordered {

    private static final Set<PosixFilePermission> OTHERS_WRITE =
            Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        String dir = env.getProperty("lockwatch.routes.dir");
        if (dir == null || dir.isBlank()) {
            return;
        }
        Path path = Path.of(dir);
        try {
            Files.createDirectories(path);
        } catch (IOException | RuntimeException e) {
            env.getPropertySources().addFirst(new MapPropertySource("lockwatchNoRoutesDirectory",
                    Map.of("camel.main.routes-reload-enabled", "false",
                            "camel.main.routes-include-pattern", jarRoutesOnly(env))));
            return;
        }
        refuseIfOthersMayWrite(path);
    }

    /** The configured route files without the routes directory's, which could not be made. */
    private static String jarRoutesOnly(ConfigurableEnvironment env) {
        return Arrays.stream(env.getProperty("camel.main.routes-include-pattern", "").split(","))
                .map(String::strip)
                .filter(pattern -> !pattern.startsWith("file:"))
                .collect(Collectors.joining(","));
    }

    /** @throws WritableByOthersException naming the first of the directory and its route files that others may write */
    static void refuseIfOthersMayWrite(Path dir) {
        try {
            check(dir);
            try (DirectoryStream<Path> routes = Files.newDirectoryStream(dir, "*.camel.yaml")) {
                for (Path route : routes) {
                    check(route);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the routes directory " + dir + ": " + e, e);
        }
    }

    private static void check(Path path) throws IOException {
        PosixFileAttributeView posix = Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        if (posix == null) {
            return; // no POSIX permissions to read here (not a Unix file system)
        }
        Path real = path.toRealPath();
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(real);
        if (permissions.stream().anyMatch(OTHERS_WRITE::contains)) {
            throw new WritableByOthersException(real, permissions);
        }
    }

    /** The routes directory, or a route in it, that its group or others may write. */
    public static final class WritableByOthersException extends IllegalStateException {
        private final Path path;

        WritableByOthersException(Path path, Set<PosixFilePermission> permissions) {
            super("lockwatch will not load routes from " + path + ": its group or others may write it ("
                    + java.nio.file.attribute.PosixFilePermissions.toString(permissions) + "), and a route runs code");
            this.path = path;
        }

        public Path path() {
            return path;
        }
    }

    /** Spring Boot's short report, not a stack trace. */
    public static final class WritableByOthersFailureAnalyzer extends AbstractFailureAnalyzer<WritableByOthersException> {
        @Override
        protected FailureAnalysis analyze(Throwable root, WritableByOthersException cause) {
            return new FailureAnalysis(cause.getMessage(), "Let only its owner write it (chmod go-w " + cause.path()
                    + "), or point lockwatch.routes.dir at a directory only the operator can write.", cause);
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
