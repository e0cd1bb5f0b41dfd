package io.lockwatch.notify;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Standard Webhooks signatures: {@code v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>}, keyed by
 * the bytes of a {@code whsec_<base64>} secret.
 */
public final class WebhookSigner {

    public static final String SECRET_PREFIX = "whsec_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private WebhookSigner() {
    }

    /** A new secret of 32 random bytes. */
    public static String newSecret() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return SECRET_PREFIX + Base64.getEncoder().encodeToString(key);
    }

    /**
     * The {@code webhook-signature} header: the secret's signature, and during a rotation's grace period the
     * previous secret's too, space-separated, the new one first.
     */
    public static String header(String secret, String previousSecret, String id, long timestampSeconds, String body) {
        String signature = sign(secret, id, timestampSeconds, body);
        return previousSecret == null ? signature : signature + " " + sign(previousSecret, id, timestampSeconds, body);
    }

    public static String sign(String secret, String id, long timestampSeconds, String body) {
        if (!secret.startsWith(SECRET_PREFIX)) {
            throw new IllegalArgumentException("not a webhook secret");
        }
        byte[] key = Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length()));
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] signature = mac.doFinal((id + "." + timestampSeconds + "." + body).getBytes(StandardCharsets.UTF_8));
            return "v1," + Base64.getEncoder().encodeToString(signature);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
