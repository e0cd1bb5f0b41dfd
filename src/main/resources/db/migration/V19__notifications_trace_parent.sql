-- Tracing (issue 23): the W3C traceparent of the span that recorded a notification (an ingest batch, a heartbeat or
-- alarm scan), so that each delivery attempt, by whichever instance, is a span of the same trace. Null while
-- tracing is off. Nullable without a default: adding it rewrites nothing.
ALTER TABLE notifications ADD COLUMN trace_parent text;
