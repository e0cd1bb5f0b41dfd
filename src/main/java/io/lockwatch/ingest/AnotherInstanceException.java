package io.lockwatch.ingest;

/** A running instance this one must not consume beside, as it is configured; the message says what to change. */
class AnotherInstanceException extends RuntimeException {

    public AnotherInstanceException(String message) {
        super(message);
    }
}
