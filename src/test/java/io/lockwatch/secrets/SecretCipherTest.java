package io.lockwatch.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretCipherTest {

    static final String OLD = SecretCipher.newKey("k1"), NEW = SecretCipher.newKey("k2");
    static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(new byte[24]);

    @Test
    void aSealedSecretOpensAndShowsNothingOfItself() {
        SecretCipher cipher = new SecretCipher(List.of(NEW));
        String sealed = cipher.seal(SECRET);

        assertThat(sealed).startsWith("aesgcm:k2:").doesNotContain(SECRET).doesNotContain("whsec_");
        assertThat(cipher.open(sealed)).isEqualTo(SECRET);
        assertThat(cipher.seal(SECRET)).as("a fresh nonce each time").isNotEqualTo(sealed);
    }

    @Test
    void theNewestKeySealsAndEveryConfiguredKeyOpens() {
        String underOld = new SecretCipher(List.of(OLD)).seal(SECRET);
        SecretCipher rotated = new SecretCipher(List.of(NEW, OLD));

        assertThat(rotated.open(underOld)).isEqualTo(SECRET);
        assertThat(rotated.isCurrent(underOld)).isFalse();
        assertThat(rotated.isCurrent(rotated.seal(SECRET))).isTrue();
        assertThatThrownBy(() -> new SecretCipher(List.of(NEW)).open(underOld))
                .isInstanceOf(SecretCipher.UnknownKeyException.class).hasMessageContaining("k1");
    }

    @Test
    void anAlteredValueDoesNotOpen() {
        SecretCipher cipher = new SecretCipher(List.of(NEW));
        String sealed = cipher.seal(SECRET);
        byte[] bytes = Base64.getDecoder().decode(sealed.substring("aesgcm:k2:".length()));
        bytes[bytes.length / 2] ^= 1;

        assertThatThrownBy(() -> cipher.open("aesgcm:k2:" + Base64.getEncoder().encodeToString(bytes)))
                .hasMessageContaining("does not open");
        assertThatThrownBy(() -> cipher.open(sealed.substring(0, sealed.length() - 8))).hasMessageContaining("does not open");
    }

    @Test
    void aSecretStoredBeforeEncryptionIsUsedAsItIs() {
        SecretCipher cipher = new SecretCipher(List.of(NEW));

        assertThat(cipher.open(SECRET)).isEqualTo(SECRET);
        assertThat(cipher.isCurrent(SECRET)).isFalse();
        assertThat(cipher.open(null)).isNull();
    }

    @Test
    void aBadKeySayWhatIsWrongWithoutShowingIt() {
        assertThatThrownBy(() -> new SecretCipher(List.of("k1:" + Base64.getEncoder().encodeToString(new byte[16]))))
                .hasMessageContaining("16 bytes");
        assertThatThrownBy(() -> new SecretCipher(List.of("no-id-here"))).hasMessageContaining("<id>:<base64");
        assertThatThrownBy(() -> new SecretCipher(List.of("k1:not base64!"))).hasMessage("key k1 is not base64");
        assertThatThrownBy(() -> new SecretCipher(List.of(OLD, OLD))).hasMessageContaining("twice");
    }

    @Test
    void theEmbeddedDefaultMakesItsKeyOnceForItsOwnerOnly(@TempDir Path dir) throws Exception {
        String first = SecretsConfiguration.embeddedKey(dir.resolve("data"));
        String again = SecretsConfiguration.embeddedKey(dir.resolve("data"));

        assertThat(again).isEqualTo(first);
        assertThat(new SecretCipher(List.of(first)).open(new SecretCipher(List.of(again)).seal(SECRET))).isEqualTo(SECRET);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("data").resolve(SecretsConfiguration.KEY_FILE))))
                .isEqualTo("rw-------");
    }
}
