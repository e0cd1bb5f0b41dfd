package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import io.lockwatch.LockwatchApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Routes run code: the service loads them only from a directory, and files, that no one but the owner may write. */
class RoutesDirectoryTest {

    @TempDir Path tmp;

    @Test
    void aDirectoryAndRoutesOnlyTheirOwnerMayWriteAreTaken() throws Exception {
        Path dir = dir("rwxr-xr-x");
        route(dir, "mine.camel.yaml", "rw-r--r--");
        // what is not a route is not looked at
        route(dir, "notes.txt", "rw-rw-rw-");

        assertThatCode(() -> RoutesDirectory.refuseIfOthersMayWrite(dir)).doesNotThrowAnyException();
    }

    @Test
    void aDirectoryItsGroupOrOthersMayWriteIsRefused() throws Exception {
        Path group = dir("rwxrwxr-x");
        Path others = Files.createDirectory(tmp.resolve("others"));
        Files.setPosixFilePermissions(others, PosixFilePermissions.fromString("rwxr-xrwx"));

        assertThatThrownBy(() -> RoutesDirectory.refuseIfOthersMayWrite(group))
                .isInstanceOf(RoutesDirectory.WritableByOthersException.class)
                .hasMessageContaining(group.toRealPath().toString()).hasMessageContaining("rwxrwxr-x");
        assertThatThrownBy(() -> RoutesDirectory.refuseIfOthersMayWrite(others))
                .isInstanceOf(RoutesDirectory.WritableByOthersException.class);
    }

    @Test
    void aRouteOthersMayWriteIsRefusedAlsoBehindALink() throws Exception {
        Path dir = dir("rwx------");
        route(dir, "open.camel.yaml", "rw-rw-rw-");
        Path linked = dir("rwx------");
        Path target = route(tmp, "elsewhere.yaml", "rw-r--rw-");
        Files.createSymbolicLink(linked.resolve("linked.camel.yaml"), target);

        assertThatThrownBy(() -> RoutesDirectory.refuseIfOthersMayWrite(dir))
                .isInstanceOf(RoutesDirectory.WritableByOthersException.class).hasMessageContaining("open.camel.yaml");
        assertThatThrownBy(() -> RoutesDirectory.refuseIfOthersMayWrite(linked))
                .isInstanceOf(RoutesDirectory.WritableByOthersException.class).hasMessageContaining("elsewhere.yaml");
    }

    @Test
    void theServiceRefusesToStartWithOneLineSayingWhatToDo() throws Exception {
        Path dir = dir("rwxrwxrwx");

        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(LockwatchApplication.class)
                .web(WebApplicationType.NONE)
                .run("--lockwatch.routes.dir=" + dir)
                .close());

        assertThat(failure).isInstanceOf(RoutesDirectory.WritableByOthersException.class);
        FailureAnalysis analysis = new RoutesDirectory.WritableByOthersFailureAnalyzer().analyze(failure);
        assertThat(analysis.getDescription()).doesNotContain("\n").contains(dir.toRealPath().toString());
        assertThat(analysis.getAction()).contains("chmod go-w " + dir.toRealPath());
    }

    private int dirs;

    private Path dir(String permissions) throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("routes-" + dirs++));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(permissions));
        return dir;
    }

    private static Path route(Path dir, String name, String permissions) throws Exception {
        Path file = Files.writeString(dir.resolve(name), "- route:\n    from:\n      uri: timer:x\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(permissions));
        return file;
    }
}
