package io.lockwatch.secrets;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SecretsProperties.class)
class SecretsConfiguration {

    private static final Logger log = LoggerFactory.getLogger(SecretsConfiguration.class);
    static final String KEY_FILE = "secrets.key";

    @Bean
    SecretCipher secretCipher(SecretsProperties props, Environment env) throws IOException {
        if (!props.keys().isEmpty()) {
            return new SecretCipher(props.keys());
        }
        if (env.acceptsProfiles(Profiles.of("embedded"))) {
            return new SecretCipher(List.of(embeddedKey(Path.of(env.getRequiredProperty("lockwatch.embedded.data-dir")))));
        }
        throw new IllegalStateException("no key for webhook secrets at rest: set lockwatch.secrets.keys "
                + "(LOCKWATCH_SECRETS_KEYS), e.g. k1:$(openssl rand -base64 32)");
    }

    /** The embedded default's own key: made once, readable by its owner only, kept beside its database. */
    static String embeddedKey(Path dataDir) throws IOException {
        Path file = dataDir.resolve(KEY_FILE);
        if (!Files.exists(file)) {
            Files.createDirectories(dataDir);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                Files.writeString(file, SecretCipher.newKey("embedded") + "\n", StandardCharsets.US_ASCII);
                log.info("Made a key for webhook secrets at rest in {}", file);
            } catch (FileAlreadyExistsException e) {
                // another start made it meanwhile
            }
        }
        return Files.readString(file, StandardCharsets.US_ASCII).trim();
    }

    @Bean
    SecretsAtRest secretsAtRest(JdbcTemplate jdbc, SecretCipher cipher) {
        return new SecretsAtRest(jdbc, cipher);
    }
}
