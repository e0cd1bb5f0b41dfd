package io.lockwatch.history;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * An opaque page cursor: the sort key of the last item shown (a time and a tie-breaker). One that names what no
 * page could have shown (a time the stores cannot hold, a tie-breaker too long or of the wrong kind) is refused
 * here, as forged, before a query sees it.
 */
record Cursor(long time, String tieBreaker) {

    /** Longer than any reading id or sequence a page shows. */
    private static final int TIE_BREAKER_MAX = 64;

    /** @throws IllegalArgumentException "invalid cursor" */
    static Cursor parse(String cursor) {
        if (cursor == null || cursor.isBlank()) {
            return null;
        }
        Cursor parsed;
        try {
            String raw = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            int colon = raw.indexOf(':');
            parsed = new Cursor(Long.parseLong(raw.substring(0, colon)), raw.substring(colon + 1));
        } catch (RuntimeException e) {
            throw invalid();
        }
        if (parsed.time < HistoryStore.EARLIEST_MS || parsed.time > HistoryStore.LATEST_MS
                || parsed.tieBreaker.isEmpty() || parsed.tieBreaker.length() > TIE_BREAKER_MAX) {
            throw invalid();
        }
        return parsed;
    }

    /** The tie-breaker of an events page: a sequence number. @throws IllegalArgumentException "invalid cursor" */
    long sequence() {
        try {
            return Long.parseLong(tieBreaker);
        } catch (NumberFormatException e) {
            throw invalid();
        }
    }

    private static IllegalArgumentException invalid() {
        return new IllegalArgumentException("invalid cursor");
    }

    String encode() {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((time + ":" + tieBreaker).getBytes(StandardCharsets.UTF_8));
    }
}
