package io.lockwatch.secrets;

import java.util.List;
import java.util.UUID;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * At start, every client's secrets that are stored in clear (written before encryption, or by hand) or sealed
 * under an older key are sealed under the newest one. Each row is changed only if it still holds what was read,
 * so instances starting together, or a rotation meanwhile, never lose a secret.
 */
class SecretsAtRest implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(SecretsAtRest.class);

    private final JdbcTemplate jdbc;
    private final SecretCipher cipher;

    SecretsAtRest(JdbcTemplate jdbc, SecretCipher cipher) {
        this.jdbc = jdbc;
        this.cipher = cipher;
    }

    private record Stored(UUID id, String secret, String previous) {
    }

    @Override
    public void run(ApplicationArguments args) {
        int sealed = sealAll();
        if (sealed > 0) {
            log.info("Sealed the webhook secrets of {} clients under the newest key", sealed);
        }
    }

    /** @return how many clients' rows were sealed again */
    int sealAll() {
        List<Stored> stale = jdbc.query("""
                SELECT id, webhook_secret, previous_secret FROM clients
                 WHERE webhook_secret NOT LIKE ? OR previous_secret NOT LIKE ?""",
                (rs, i) -> new Stored(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3)),
                current(), current());
        int n = 0;
        for (Stored s : stale) {
            if (cipher.isCurrent(s.secret()) && cipher.isCurrent(s.previous())) {
                continue;
            }
            try {
                n += jdbc.update("""
                        UPDATE clients SET webhook_secret = ?, previous_secret = ?
                         WHERE id = ? AND webhook_secret = ? AND previous_secret IS NOT DISTINCT FROM ?""",
                        reseal(s.secret()), reseal(s.previous()), s.id(), s.secret(), s.previous());
            } catch (SecretCipher.UnknownKeyException e) {
                log.error("Client {}: {}", s.id(), e.getMessage());
            }
        }
        return n;
    }

    /** A LIKE pattern of the values sealed under the newest key (a key id may hold {@code _}). */
    private String current() {
        return cipher.currentPrefix().replace("_", "\\_") + "%";
    }

    private String reseal(String stored) {
        return stored == null || cipher.isCurrent(stored) ? stored : cipher.seal(cipher.open(stored));
    }
}
