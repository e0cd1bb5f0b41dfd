package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.stream.Stream;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A freshly initialised and cleanly stopped PostgreSQL cluster, made once per JVM, from which each ephemeral data
 * directory (the tests') is copied: a copy takes a fraction of initdb's time, and a test run starts a context, with
 * its own ephemeral PostgreSQL, dozens of times. Made by this JVM's binaries, so it cannot be of another version; a
 * template left by a JVM that has gone is deleted by the next one.
 */
final class PostgresTemplate {

    private static final Logger log = LoggerFactory.getLogger(PostgresTemplate.class);

    private static final String PREFIX = "postgres-template-";

    private static Path made; // guarded by the class

    private PostgresTemplate() {
    }

    /** Copies the template (made first, under {@code base}, if this JVM has none yet) into the empty {@code pgData}. */
    static void copyInto(Path pgData, Path base) throws IOException {
        Path template = template(base);
        long started = System.nanoTime();
        copy(template, pgData);
        log.debug("PostgreSQL cluster copied from {} in {} ms", template, (System.nanoTime() - started) / 1_000_000);
    }

    private static synchronized Path template(Path base) throws IOException {
        if (made != null && Files.exists(made.resolve("postgresql.conf"))) {
            return made;
        }
        deleteLeftBehind(base);
        Path dir = base.resolve(PREFIX + ProcessHandle.current().pid());
        delete(dir);
        Files.createDirectories(dir);
        long started = System.nanoTime();
        EmbeddedPostgres.builder()
                .setDataDirectory(dir)
                .setCleanDataDirectory(false)
                .setRegisterShutdownHook(false)
                .setServerConfig("listen_addresses", "127.0.0.1")
                .setOutputRedirector(ProcessBuilder.Redirect.DISCARD)
                .setErrorRedirector(ProcessBuilder.Redirect.DISCARD)
                .start()
                .close(); // a clean stop: no postmaster.pid, nothing to recover
        log.info("Ephemeral PostgreSQL clusters are copied from {} (made in {} ms)", dir, (System.nanoTime() - started) / 1_000_000);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir), "postgres-template-delete"));
        made = dir;
        return dir;
    }

    /** Templates of JVMs no longer running (one killed, or stopped before its hook ran). */
    private static void deleteLeftBehind(Path base) throws IOException {
        if (!Files.isDirectory(base)) {
            return;
        }
        try (Stream<Path> dirs = Files.list(base)) {
            dirs.filter(d -> d.getFileName().toString().startsWith(PREFIX))
                    .filter(d -> {
                        try {
                            long pid = Long.parseLong(d.getFileName().toString().substring(PREFIX.length()));
                            return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
                        } catch (NumberFormatException e) {
                            return false;
                        }
                    })
                    .forEach(PostgresTemplate::delete);
        }
    }

    /** With permissions: PostgreSQL refuses a data directory others may read. */
    private static void copy(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(dir).toString());
                if (!Files.exists(target)) {
                    Files.copy(dir, target, StandardCopyOption.COPY_ATTRIBUTES);
                } else if (Files.getFileStore(target).supportsFileAttributeView(PosixFileAttributeView.class)) {
                    Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(dir));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void delete(Path dir) {
        new EmbeddedServicesConfiguration.EphemeralDataDirectory(dir).close();
    }
}
