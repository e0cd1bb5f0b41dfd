package io.lockwatch.selfservice;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * API keys scoped to one client, in PostgreSQL. A key is {@code lwc_<its id>_<secret>}: the id finds it, the secret
 * proves it. The secret leaves this class only from {@link #create}, once; what is kept is its SHA-256.
 *
 * <p>A key proven against the database is taken for {@code cacheFor} without asking it again: a pulling client
 * presents its key on every poll, and two statements a poll were a tenth of the request threads' CPU with 1,000 of
 * them. Revoked or expired here, or its client deleted here ({@link #forgetClient}), a key is refused at once.
 * Every instance looks at what changed about keys ({@code client_key_changes}, written by a trigger) every watch
 * interval and forgets those: revoked through another instance, or gone with its client, a key is refused within
 * that interval. Only keys that were proven are kept, so
 * a stream of made-up tokens fills nothing.
 */
public class ClientKeys {

    /** Where the security chain leaves the {@link Holder} of the request's key, for the API to hold it to its client. */
    public static final String REQUEST_ATTRIBUTE = "io.lockwatch.client-key";

    /** Where the security chain leaves the name of the request's caller (a token by its place, a key by its id). */
    public static final String CALLER_ATTRIBUTE = "io.lockwatch.caller";

    public static final String READ = "client-read", ADMIN = "client-admin";

    private static final Pattern FORM = Pattern.compile("lwc_([0-9a-f]{32})_([A-Za-z0-9_-]{43})");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Who a presented key is: the key, its client, its role. */
    public record Holder(UUID keyId, UUID clientId, String role) {
        public boolean admin() {
            return ADMIN.equals(role);
        }
    }

    /**
     * A key without its secret: {@code state} is {@code active}, {@code expired} or {@code revoked}.
     */
    @com.fasterxml.jackson.databind.annotation.JsonNaming(com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Key(UUID id, UUID clientId, String name, String role, String state, Instant createdAt,
                      String createdBy, Instant expiresAt, Instant revokedAt, Instant lastUsedAt) {
    }

    /** A new key and the token that is it, in clear: the only time it is seen. */
    public record NewKey(Key key, String token) {
    }

    private static final String COLUMNS = """
            id, client_id, name, role, created_at, created_by, expires_at, revoked_at, last_used_at,
            CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= now() THEN 'expired' ELSE 'active' END AS state
            """;

    private static final long USE_RECORDED_EVERY = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

    private final JdbcTemplate jdbc;
    private final long cacheFor;
    /** Keys proven lately, by id; idle ones go after a while, and the most kept is a bound, not a size to expect. */
    private final com.github.benmanes.caffeine.cache.Cache<UUID, Proven> proven = com.github.benmanes.caffeine.cache.Caffeine
            .newBuilder().maximumSize(1_000_000).expireAfterAccess(java.time.Duration.ofMinutes(10)).build();

    /** A key as the database proved it, when (nanoTime), and when its last use was last recorded there. */
    private record Proven(byte[] secretHash, Holder holder, Instant expiresAt, long provenAt, long useRecordedAt) {
        boolean expired(Instant now) {
            return expiresAt != null && !expiresAt.isAfter(now);
        }
    }

    public ClientKeys(JdbcTemplate jdbc, java.time.Duration cacheFor) {
        this.jdbc = jdbc;
        this.cacheFor = cacheFor.toNanos();
    }

    private static final long CHANGES_KEPT = java.util.concurrent.TimeUnit.HOURS.toNanos(1);

    /** The database's time of the last look at changed keys; null before the first. */
    private Timestamp lookedAt;
    /** When (nanoTime) this instance last deleted the changes no look needs any more. */
    private long changesDeletedAt = System.nanoTime();

    /**
     * Forgets the proven keys that changed since the last look (revoked, expiry set, deleted), by any instance. A
     * minute's margin takes in a change whose transaction committed after a later one's look; a key changed within
     * it is forgotten at each look (so proven again at most once a look). Once an hour, the changes older than an hour
     * go.
     */
    public synchronized void forgetChanged() {
        java.util.Map<String, Object> look = jdbc.queryForMap("""
                SELECT now() AS looked_at,
                       array(SELECT DISTINCT key_id FROM client_key_changes
                              WHERE changed_at > COALESCE(?, now()) - interval '1 minute') AS keys""", lookedAt);
        try {
            for (Object id : (Object[]) ((java.sql.Array) look.get("keys")).getArray()) {
                proven.invalidate((UUID) id);
            }
        } catch (java.sql.SQLException e) {
            throw new org.springframework.dao.DataRetrievalFailureException("the changed keys' ids", e);
        }
        lookedAt = (Timestamp) look.get("looked_at");
        if (System.nanoTime() - changesDeletedAt >= CHANGES_KEPT) {
            jdbc.update("DELETE FROM client_key_changes WHERE changed_at < now() - interval '1 hour'");
            changesDeletedAt = System.nanoTime();
        }
    }

    /** A token that has the form of a client key (whether it is one is {@link #authenticate}'s to say). */
    public static boolean looksLikeOne(String token) {
        return token != null && token.startsWith("lwc_");
    }

    /** A new key of the client; null if there is no such client. */
    public NewKey create(UUID clientId, String name, String role, Instant expiresAt, String by) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        List<UUID> id = jdbc.queryForList("""
                INSERT INTO client_keys (client_id, name, role, secret_hash, created_by, expires_at)
                SELECT id, ?, ?, ?, ?, ? FROM clients WHERE id = ?
                RETURNING id""", UUID.class, name, role, sha256(secret), by,
                expiresAt == null ? null : Timestamp.from(expiresAt), clientId);
        if (id.isEmpty()) {
            return null;
        }
        return new NewKey(find(clientId, id.get(0)), "lwc_" + id.get(0).toString().replace("-", "") + "_" + secret);
    }

    /** The client's keys, oldest first; null if there is no such client. */
    public List<Key> list(UUID clientId) {
        if (!Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)", Boolean.class,
                clientId))) {
            return null;
        }
        return jdbc.query("SELECT " + COLUMNS + " FROM client_keys WHERE client_id = ? ORDER BY created_at, id", KEY, clientId);
    }

    /** @return the key, or null if the client has no such key */
    public Key find(UUID clientId, UUID keyId) {
        List<Key> found = jdbc.query("SELECT " + COLUMNS + " FROM client_keys WHERE client_id = ? AND id = ?", KEY,
                clientId, keyId);
        return found.isEmpty() ? null : found.get(0);
    }

    /** Revokes the key at once (again: no change); null if the client has no such key. */
    public Key revoke(UUID clientId, UUID keyId) {
        jdbc.update("UPDATE client_keys SET revoked_at = now() WHERE client_id = ? AND id = ? AND revoked_at IS NULL",
                clientId, keyId);
        proven.invalidate(keyId);
        return find(clientId, keyId);
    }

    /** Sets when the key expires (null: never); null if the client has no such key. A revoked key stays revoked. */
    public Key expire(UUID clientId, UUID keyId, Instant expiresAt) {
        jdbc.update("UPDATE client_keys SET expires_at = ? WHERE client_id = ? AND id = ?",
                expiresAt == null ? null : Timestamp.from(expiresAt), clientId, keyId);
        proven.invalidate(keyId);
        return find(clientId, keyId);
    }

    /** What a change that may only bring a key's expiry forward did: the key, and whether it was refused. */
    public record Tightened(Key key, boolean refused) {
    }

    /**
     * Sets when the key expires, only if that is no later than it was: a key that never expired may be given an
     * expiry, one that expires may expire sooner, never later nor never again (an expired key stays expired). One
     * statement, so a shorter expiry set meanwhile (by an operator) is not undone. Null if the client has no such key.
     */
    public Tightened expireNoLater(UUID clientId, UUID keyId, Instant expiresAt) {
        int changed = expiresAt == null
                ? jdbc.update("UPDATE client_keys SET expires_at = NULL WHERE client_id = ? AND id = ? AND expires_at IS NULL",
                        clientId, keyId)
                : jdbc.update("""
                        UPDATE client_keys SET expires_at = ?
                         WHERE client_id = ? AND id = ? AND (expires_at IS NULL OR expires_at >= ?)""",
                        Timestamp.from(expiresAt), clientId, keyId, Timestamp.from(expiresAt));
        proven.invalidate(keyId);
        Key key = find(clientId, keyId);
        return key == null ? null : new Tightened(key, changed == 0);
    }

    /**
     * Forgets the proven keys of a client just deleted here, so that they are refused at once by this instance (the
     * database has deleted them with it; the other instances forget them at their next look).
     */
    public void forgetClient(UUID clientId) {
        proven.asMap().values().removeIf(p -> p.holder().clientId().equals(clientId));
    }

    /**
     * Who holds this token, if it is a live key (neither revoked nor expired) of a client; else null. Its last use is
     * recorded at most once a minute.
     */
    public Holder authenticate(String token) {
        Matcher m = FORM.matcher(token == null ? "" : token);
        if (!m.matches()) {
            return null;
        }
        UUID id = uuid(m.group(1));
        byte[] hash = sha256(m.group(2)).getBytes(StandardCharsets.US_ASCII);
        long now = System.nanoTime();
        Proven known = proven.getIfPresent(id);
        if (known != null && now - known.provenAt() < cacheFor && !known.expired(Instant.now())) {
            // a key's secret never changes: what the database would compare is what was kept
            if (!MessageDigest.isEqual(hash, known.secretHash())) {
                return null;
            }
            if (now - known.useRecordedAt() >= USE_RECORDED_EVERY) {
                recordUse(id);
                proven.put(id, new Proven(known.secretHash(), known.holder(), known.expiresAt(), known.provenAt(), now));
            }
            return known.holder();
        }
        List<Object[]> rows = jdbc.query("""
                SELECT client_id, role, secret_hash, expires_at FROM client_keys
                 WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())""",
                (rs, i) -> new Object[] {rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                        instant(rs.getTimestamp(4))}, id);
        if (rows.isEmpty() || !MessageDigest.isEqual(hash, ((String) rows.get(0)[2]).getBytes(StandardCharsets.US_ASCII))) {
            proven.invalidate(id);
            return null;
        }
        boolean record = known == null || now - known.useRecordedAt() >= USE_RECORDED_EVERY;
        if (record) {
            recordUse(id);
        }
        Holder holder = new Holder(id, (UUID) rows.get(0)[0], (String) rows.get(0)[1]);
        proven.put(id, new Proven(hash, holder, (Instant) rows.get(0)[3], now, record ? now : known.useRecordedAt()));
        return holder;
    }

    private void recordUse(UUID id) {
        jdbc.update("""
                UPDATE client_keys SET last_used_at = now()
                 WHERE id = ? AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')""", id);
    }

    /** A UUID from its 32 hex digits, as a token holds them (the caller's pattern has checked them). */
    static UUID uuid(String hex) {
        return new UUID(Long.parseUnsignedLong(hex, 0, 16, 16), Long.parseUnsignedLong(hex, 16, 32, 16));
    }

    static String sha256(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static final RowMapper<Key> KEY = (rs, i) -> new Key(rs.getObject("id", UUID.class),
            rs.getObject("client_id", UUID.class), rs.getString("name"), rs.getString("role"), rs.getString("state"),
            instant(rs.getTimestamp("created_at")), rs.getString("created_by"), instant(rs.getTimestamp("expires_at")),
            instant(rs.getTimestamp("revoked_at")), instant(rs.getTimestamp("last_used_at")));

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
