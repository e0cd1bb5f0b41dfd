package io.lockwatch.security;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * People's sign-ins to the console, and their sign-outs: a sign-out refuses every token of the person issued before
 * it, whichever instance is asked (each looks again at most a second after it last did).
 */
public class SignIns {

    /** A sign-in whose token has not expired, and whose person has not been signed out since. */
    @com.fasterxml.jackson.databind.annotation.JsonNaming(com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record SignIn(UUID id, String subject, String name, Instant signedInAt, Instant expiresAt) {
    }

    /** Where the identity provider's back-channel logouts come in (OpenID Connect Back-Channel Logout). */
    public static final String BACK_CHANNEL_LOGOUT_PATH = "/logout/connect/back-channel/" + SsoSignIn.REGISTRATION;
    private static final Instant NEVER = Instant.EPOCH;
    /** Sign-ins {@code i} that are live: not expired, and their person not signed out since. */
    private static final String LIVE = """
            sign_ins i LEFT JOIN sign_outs o ON o.subject = i.subject
             WHERE i.expires_at > now() AND (o.before IS NULL OR i.signed_in_at >= o.before)""";

    private final JdbcTemplate jdbc;
    private final Cache<String, Instant> signedOut = Caffeine.newBuilder().expireAfterWrite(Duration.ofSeconds(1))
            .maximumSize(10_000).build();

    public SignIns(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    UUID signedIn(String subject, String name, String sid, Instant expiresAt) {
        UUID id = UUID.randomUUID();
        jdbc.update("INSERT INTO sign_ins (id, subject, name, sid, signed_in_at, expires_at) VALUES (?, ?, ?, ?, now(), ?)",
                id, subject, name, sid, Timestamp.from(expiresAt));
        // what expired a day ago is no one's to see
        jdbc.update("DELETE FROM sign_ins WHERE expires_at < now() - interval '1 day'");
        return id;
    }

    public List<SignIn> live() {
        return jdbc.query("SELECT i.id, i.subject, i.name, i.signed_in_at, i.expires_at FROM " + LIVE
                        + " ORDER BY i.signed_in_at DESC LIMIT 1000",
                (rs, n) -> new SignIn(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                        rs.getTimestamp(4).toInstant(), rs.getTimestamp(5).toInstant()));
    }

    /**
     * Signs out the person of that sign-in, everywhere: @return false if there is no such live sign-in (an expired or
     * already ended one is not a handle on the person's later sign-ins)
     */
    public boolean end(UUID signIn, String by) {
        List<String> subject = jdbc.queryForList("SELECT i.subject FROM " + LIVE + " AND i.id = ?", String.class, signIn);
        if (subject.isEmpty()) {
            return false;
        }
        signOut(subject.get(0), by);
        return true;
    }

    /** The provider's back-channel logout: by the subject, or by its session id alone (none known: nobody). */
    void signOutAtTheProvidersWord(String subject, String sid) {
        String who = subject;
        if (who == null && sid != null) {
            List<String> found = jdbc.queryForList("SELECT subject FROM sign_ins WHERE sid = ? LIMIT 1", String.class, sid);
            who = found.isEmpty() ? null : found.get(0);
        }
        if (who != null) {
            signOut(who, "identity-provider");
        }
    }

    private void signOut(String subject, String by) {
        jdbc.update("""
                INSERT INTO sign_outs (subject, before, by) VALUES (?, now(), ?)
                ON CONFLICT (subject) DO UPDATE SET before = greatest(sign_outs.before, excluded.before), by = excluded.by""",
                subject, by);
        signedOut.invalidate(subject);
    }

    /** Whether a token of the subject issued then (null: unknown) is refused by a sign-out since. */
    boolean signedOutSince(String subject, Instant issuedAt) {
        Instant before = signedOut.get(subject, s -> {
            List<Timestamp> t = jdbc.queryForList("SELECT before FROM sign_outs WHERE subject = ?", Timestamp.class, s);
            return t.isEmpty() ? NEVER : t.get(0).toInstant();
        });
        // a token's iat is in seconds: one issued in the sign-out's own second is refused too
        return before != NEVER && (issuedAt == null || issuedAt.getEpochSecond() <= before.getEpochSecond());
    }
}
