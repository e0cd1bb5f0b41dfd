package io.lockwatch.secrets;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Webhook secrets as they are kept at rest: AES-256-GCM under the newest of the configured keys, stored as
 * {@code aesgcm:<key id>:<base64 of nonce, ciphertext and tag>}. Any configured key opens what it sealed, so keys
 * can be rotated: configure the new one first and keep the old ones until every row is sealed again (the service
 * does that at start). A value without that prefix is a secret stored before encryption, used as it is until it
 * is sealed.
 */
public final class SecretCipher {

    static final String PREFIX = "aesgcm:";
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,32}");
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    /** Binds a ciphertext to its use: it cannot be passed off as another kind of secret sealed with the same key. */
    private static final byte[] CONTEXT = "lockwatch webhook secret".getBytes(StandardCharsets.US_ASCII);

    private final String currentId;
    private final Map<String, SecretKey> keys;
    private final SecureRandom random = new SecureRandom();
    /**
     * Secrets opened, by their sealed form: each claimed delivery carries its client's, and a new AES-GCM cipher for
     * each was about 26 µs of a notification's service CPU (issue 55). The most kept is a bound, not a size to expect.
     */
    private final com.github.benmanes.caffeine.cache.Cache<String, String> opened = com.github.benmanes.caffeine.cache.Caffeine
            .newBuilder().maximumSize(10_000).build();

    /** @param keys {@code <id>:<base64 of 32 bytes>} each, the newest first: it seals, every one opens */
    public SecretCipher(List<String> keys) {
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("no key");
        }
        Map<String, SecretKey> parsed = new LinkedHashMap<>();
        for (String entry : keys) {
            int colon = entry.indexOf(':');
            String id = colon < 0 ? "" : entry.substring(0, colon).trim();
            if (!KEY_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("a key is <id>:<base64 of 32 bytes>, the id 1 to 32 letters, digits, - or _");
            }
            byte[] bytes;
            try {
                bytes = Base64.getDecoder().decode(entry.substring(colon + 1).trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("key " + id + " is not base64");
            }
            if (bytes.length != 32) {
                throw new IllegalArgumentException("key " + id + " has " + bytes.length + " bytes; AES-256 takes 32");
            }
            if (parsed.put(id, new SecretKeySpec(bytes, "AES")) != null) {
                throw new IllegalArgumentException("key id " + id + " is given twice");
            }
        }
        this.keys = parsed;
        this.currentId = parsed.keySet().iterator().next();
    }

    /** A new key entry, {@code <id>:<base64>}, for a configuration or the embedded default's key file. */
    public static String newKey(String id) {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return id + ":" + Base64.getEncoder().encodeToString(key);
    }

    public String seal(String secret) {
        return seal(secret, CONTEXT);
    }

    /**
     * Sealed for another use than webhook secrets: what it says ({@code context}) is bound to the ciphertext, so a
     * value sealed for one use does not open for another. Opened with {@link #openFor}, never cached.
     */
    public String sealFor(String context, String value) {
        return seal(value, ("lockwatch " + context).getBytes(StandardCharsets.UTF_8));
    }

    /** A value {@link #sealFor} sealed for this context; null if it is not one. */
    public String openFor(String context, String stored) {
        if (!isSealed(stored)) {
            return null;
        }
        try {
            return openWith(stored, ("lockwatch " + context).getBytes(StandardCharsets.UTF_8));
        } catch (IllegalStateException e) {
            return null;
        }
    }

    private String seal(String secret, byte[] context) {
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(currentId), new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(context);
            byte[] sealed = cipher.doFinal(secret.getBytes(StandardCharsets.UTF_8));
            byte[] stored = ByteBuffer.allocate(nonce.length + sealed.length).put(nonce).put(sealed).array();
            return PREFIX + currentId + ":" + Base64.getEncoder().encodeToString(stored);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    /** Whether a value is one this class sealed (and so is opened, not taken as it is). */
    public static boolean isSealed(String value) {
        return value != null && value.startsWith(PREFIX);
    }

    /** The secret; a value stored before encryption as it is; null for null. */
    public String open(String stored) {
        if (stored == null || !stored.startsWith(PREFIX)) {
            return stored;
        }
        String known = opened.getIfPresent(stored);
        if (known != null) {
            return known;
        }
        String secret = openWith(stored, CONTEXT);
        opened.put(stored, secret);
        return secret;
    }

    private String openWith(String stored, byte[] context) {
        int colon = stored.indexOf(':', PREFIX.length());
        String id = colon < 0 ? "" : stored.substring(PREFIX.length(), colon);
        SecretKey key = keys.get(id);
        if (key == null) {
            throw new UnknownKeyException(id);
        }
        try {
            byte[] bytes = Base64.getDecoder().decode(stored.substring(colon + 1));
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, bytes, 0, NONCE_BYTES));
            cipher.updateAAD(context);
            return new String(cipher.doFinal(bytes, NONCE_BYTES, bytes.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalStateException("a stored secret sealed with key " + id + " does not open: altered or truncated");
        }
    }

    /** Whether a stored value is sealed under the newest key already (else it is sealed again at start). */
    public boolean isCurrent(String stored) {
        return stored == null || stored.startsWith(currentPrefix());
    }

    /** What every value sealed under the newest key starts with. */
    String currentPrefix() {
        return PREFIX + currentId + ":";
    }

    /** A secret sealed under a key that is no longer configured: it cannot be opened until that key is back. */
    public static final class UnknownKeyException extends IllegalStateException {
        UnknownKeyException(String id) {
            super("a stored secret is sealed with key " + id + ", which is not configured (lockwatch.secrets.keys)");
        }
    }
}
