package io.lockwatch.notify;

/**
 * A place in the feed, {@code (feed_tx, event id)} (V36), in their order; as a cursor, {@code <feed_tx>.<id>}. Both
 * fit a long: a transaction id is an epoch and a 32-bit counter.
 */
record FeedPlace(long tx, long id) implements Comparable<FeedPlace> {

    static final FeedPlace START = new FeedPlace(0, 0);

    /** The place a cursor names, or null for one that is no cursor of the feed. */
    static FeedPlace of(String cursor) {
        int dot = cursor == null ? -1 : cursor.indexOf('.');
        if (dot <= 0 || !digits(cursor.substring(0, dot)) || !digits(cursor.substring(dot + 1))) {
            return null;
        }
        try {
            return new FeedPlace(Long.parseLong(cursor.substring(0, dot)), Long.parseLong(cursor.substring(dot + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The last place before transaction {@code tx}: after every event of the transactions before it. */
    static FeedPlace justBelow(long tx) {
        return new FeedPlace(tx - 1, Long.MAX_VALUE);
    }

    FeedPlace later(FeedPlace other) {
        return compareTo(other) >= 0 ? this : other;
    }

    @Override
    public int compareTo(FeedPlace o) {
        int byTx = Long.compare(tx, o.tx);
        return byTx != 0 ? byTx : Long.compare(id, o.id);
    }

    @Override
    public String toString() {
        return tx + "." + id;
    }

    private static boolean digits(String s) {
        return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }
}
