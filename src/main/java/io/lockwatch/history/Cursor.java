package io.lockwatch.history;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** An opaque page cursor: the sort key of the last item shown (a time and a tie-breaker). */
record Cursor(long time, String tieBreaker) {

    static Cursor parse(String cursor) {
        if (cursor == null || cursor.isBlank()) {
            return null;
        }
        try {
            String raw = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            int colon = raw.indexOf(':');
            return new Cursor(Long.parseLong(raw.substring(0, colon)), raw.substring(colon + 1));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("invalid cursor");
        }
    }

    String encode() {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((time + ":" + tieBreaker).getBytes(StandardCharsets.UTF_8));
    }
}
