package io.lockwatch.selfservice;

import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Links that open the client portal: made by an operator for one client, good once and for a short time. Used, a
 * link becomes a session: a key of the client's ({@link ClientKeys}) that expires after {@code sessionLength}, shown
 * to the browser that used the link and to nobody else. A link is {@code lwp_<its id>_<secret>}; only the SHA-256 of
 * its secret is kept, as for keys.
 */
public class PortalLinks {

    private static final Pattern FORM = Pattern.compile("lwp_([0-9a-f]{32})_([A-Za-z0-9_-]{43})");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A new link: its token (for the console's URL) and when it stops being good. */
    public record NewLink(UUID id, String token, Instant expiresAt) {
    }

    /** A session made from a link: the key's token, the key, and its client. */
    public record Session(String token, ClientKeys.Key key) {
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final ClientKeys keys;
    private final Duration sessionLength;

    public PortalLinks(JdbcTemplate jdbc, TransactionTemplate tx, ClientKeys keys, Duration sessionLength) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.keys = keys;
        this.sessionLength = sessionLength;
    }

    /** A link to the client's portal, good for {@code ttl}; null if there is no such client. */
    public NewLink create(UUID clientId, String role, Duration ttl, String by) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        Instant expires = Instant.now().plus(ttl);
        List<UUID> id = jdbc.queryForList("""
                INSERT INTO portal_links (client_id, role, secret_hash, created_by, expires_at)
                SELECT id, ?, ?, ?, ? FROM clients WHERE id = ?
                RETURNING id""", UUID.class, role, ClientKeys.sha256(secret), by, Timestamp.from(expires), clientId);
        return id.isEmpty() ? null
                : new NewLink(id.get(0), "lwp_" + id.get(0).toString().replace("-", "") + "_" + secret, expires);
    }

    /**
     * The session a link opens, once: null if the token is no link of ours, or the link was used or has expired.
     * Taking the link and making the session are one transaction, so two browsers racing with one link get one
     * session between them.
     */
    public Session use(String token) {
        Matcher m = FORM.matcher(token == null ? "" : token);
        if (!m.matches()) {
            return null;
        }
        UUID id = ClientKeys.uuid(m.group(1));
        return tx.execute(status -> {
            List<Object[]> taken = jdbc.query("""
                    UPDATE portal_links SET used_at = now()
                     WHERE id = ? AND secret_hash = ? AND used_at IS NULL AND expires_at > now()
                    RETURNING client_id, role""", (rs, i) -> new Object[] {rs.getObject(1, UUID.class), rs.getString(2)},
                    id, ClientKeys.sha256(m.group(2)));
            if (taken.isEmpty()) {
                return null;
            }
            ClientKeys.NewKey session = keys.create((UUID) taken.get(0)[0], "portal session",
                    (String) taken.get(0)[1], Instant.now().plus(sessionLength), "portal-link-" + id);
            jdbc.update("UPDATE portal_links SET session_key_id = ? WHERE id = ?", session.key().id(), id);
            return new Session(session.token(), session.key());
        });
    }
}
