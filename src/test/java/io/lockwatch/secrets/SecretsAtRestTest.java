package io.lockwatch.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.notify.WebhookSigner;
import io.lockwatch.registry.Registry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/** Webhook secrets in PostgreSQL: sealed when written, and those written before sealed at start. */
@CamelSpringBootTest
// RANDOM_PORT, as the API's tests: one Spring context for both (src/test/resources/config/application.yaml)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SecretsAtRestTest {

    @Autowired JdbcTemplate jdbc;
    @Autowired Registry registry;
    @Autowired SecretCipher cipher;
    @Autowired SecretsAtRest atRest;

    @Test
    void aClientsSecretIsStoredSealedAndShownOnlyOnce() {
        var created = registry.createClient("sealed", "https://example.com/hook",
                new Registry.DeliverySettings(null, false, null, null));
        UUID id = created.client().id();
        String secret = created.webhookSecret();
        String rotated = registry.rotateSecret(id, java.time.Duration.ofHours(1)).webhookSecret();

        Map<String, Object> row = jdbc.queryForMap("SELECT webhook_secret, previous_secret FROM clients WHERE id = ?", id);
        assertThat(row.values()).allSatisfy(v -> assertThat((String) v).startsWith("aesgcm:test-2:").doesNotContain("whsec_"));
        assertThat(cipher.open((String) row.get("webhook_secret"))).isEqualTo(rotated);
        assertThat(cipher.open((String) row.get("previous_secret"))).isEqualTo(secret);
    }

    @Test
    void secretsInClearOrUnderAnOlderKeyAreSealedUnderTheNewestAtStart() {
        String plain = WebhookSigner.newSecret(), older = WebhookSigner.newSecret(), previous = WebhookSigner.newSecret();
        String underOldKey = new SecretCipher(List.of(oldTestKey())).seal(older);
        UUID inClear = insert(plain, previous);
        UUID underOld = insert(underOldKey, null);

        assertThat(atRest.sealAll()).isGreaterThanOrEqualTo(2);

        Map<String, Object> a = jdbc.queryForMap("SELECT webhook_secret, previous_secret FROM clients WHERE id = ?", inClear);
        Map<String, Object> b = jdbc.queryForMap("SELECT webhook_secret, previous_secret FROM clients WHERE id = ?", underOld);
        assertThat(cipher.isCurrent((String) a.get("webhook_secret"))).isTrue();
        assertThat(cipher.open((String) a.get("webhook_secret"))).isEqualTo(plain);
        assertThat(cipher.open((String) a.get("previous_secret"))).isEqualTo(previous);
        assertThat((String) b.get("webhook_secret")).startsWith("aesgcm:test-2:");
        assertThat(cipher.open((String) b.get("webhook_secret"))).isEqualTo(older);
        assertThat(b.get("previous_secret")).isNull();
        assertThat(atRest.sealAll()).as("nothing left to seal").isZero();
    }

    private UUID insert(String secret, String previous) {
        return jdbc.queryForObject("""
                INSERT INTO clients (name, url, webhook_secret, previous_secret, previous_secret_until)
                VALUES ('before', 'https://example.com/h', ?, ?, now() + interval '1 hour') RETURNING id""",
                UUID.class, secret, previous);
    }

    /** The older of the tests' two keys (src/test/resources/config/application.yaml). */
    private static String oldTestKey() {
        return "test-1:0Q3Qk8r0vYd0nK2kH2u3HXz3lq8jv1yW0m2f8Q7b6x4=";
    }
}
