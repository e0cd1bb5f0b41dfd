package io.lockwatch.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class RedactionTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aSecretsNameKeepsItsPlaceAndLosesItsValueAtAnyDepth() throws Exception {
        String fields = Redaction.fields(("{\"name\":\"door\",\"smtp\":{\"password\":\"hunter2\",\"host\":\"mail\"},"
                + "\"bot-token\":\"123:abc\",\"routingKey\":\"r\",\"api_key\":\"k\",\"apiKey\":[\"k1\",\"k2\"],"
                + "\"link\":\"anything\",\"links\":3}").getBytes(StandardCharsets.UTF_8));
        assertThat(JSON.readTree(fields)).isEqualTo(JSON.readTree("{\"name\":\"door\",\"smtp\":{\"password\":\"[redacted]\","
                + "\"host\":\"mail\"},\"bot-token\":\"[redacted]\",\"routingKey\":\"r\",\"api_key\":\"[redacted]\","
                + "\"apiKey\":[\"[redacted]\",\"[redacted]\"],\"link\":\"[redacted]\",\"links\":3}"));
    }

    @Test
    void lockwatchsOwnSecretsAreRedactedUnderAnyName() throws Exception {
        String fields = Redaction.fields(("{\"comment\":\"lwc_0123_secret\",\"note\":[\"whsec_abc\",\"LWP_x\",\"lwd_y\"],"
                + "\"header\":\"Bearer abc\",\"plain\":\"lwc\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(fields).doesNotContain("0123_secret", "whsec_abc", "LWP_x", "lwd_y", "Bearer abc").contains("\"plain\":\"lwc\"");
    }

    @Test
    void aSecretInsideAStringAndAUrlsCredentialsAreNotKept() throws Exception {
        String fields = Redaction.fields(("{\"comment\":\"use lwc_0123_secret please\",\"jwt\":\"x eyJhbGciOi.eyJzdWIi.sig\","
                + "\"url\":\"https://user:hunter2@hooks.example.com/a/b?token=s3cret#frag\",\"plain\":\"https://example.com/hook\"}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(fields).doesNotContain("0123_secret", "eyJzdWIi", "hunter2", "s3cret")
                .contains("https://[redacted]@hooks.example.com/a/b?[redacted]").contains("\"plain\":\"https://example.com/hook\"");
    }

    @Test
    void longStringsAndArraysAreCutAndABodyThatIsNotJsonIsNotKept() {
        String fields = Redaction.fields(("{\"a\":\"" + "x".repeat(1000) + "\",\"ids\":" + "[1" + ",1".repeat(150) + "]}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(fields).hasSizeLessThan(800).contains("…").contains("[51 more]");
        assertThat(Redaction.fields("id,address\n1,x".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(Redaction.fields(new byte[0])).isNull();
    }
}
