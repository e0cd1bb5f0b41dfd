package io.lockwatch.history;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.history.HistoryRecords.ReadingRecord;

/**
 * The body of a history message, from ingest to the history writer of the same service: a compact binary form of
 * the readings, a third of their JSON's size and without JSON's field-by-field binding on either side (the drain's
 * profile had JSON at a sixth of the per-reading work, and the broker stores every byte of it). Private to
 * lockwatch; a message that an earlier version queued as a JSON array is still read.
 */
final class HandoverCodec {

    static final String CONTENT_TYPE = "application/vnd.lockwatch.history-readings";
    /** First byte of the binary form; a JSON array starts with '[' (or white space). */
    private static final int VERSION = 1;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<ReadingRecord>> READINGS = new TypeReference<>() { };

    private static final String[] TIME_SOURCES = {"reading", "amqp_timestamp", "receipt"};

    private HandoverCodec() {
    }

    static byte[] encode(List<ReadingRecord> records) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + records.size() * 64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeInt(records.size());
            for (ReadingRecord r : records) {
                out.writeUTF(r.sensorId());
                out.writeUTF(r.readingId());
                out.writeByte(r.data());
                out.writeLong(r.measuredAt());
                out.writeLong(r.receivedAt());
                out.writeByte(timeSource(r.timeSource()));
                out.writeBoolean(r.registered());
                out.writeBoolean(r.messageId() != null);
                if (r.messageId() != null) {
                    out.writeUTF(r.messageId());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /** @throws IOException a body neither form reads: a defect, as only lockwatch writes this queue */
    static List<ReadingRecord> decode(byte[] body) throws IOException {
        if (body.length == 0 || body[0] != VERSION) {
            return JSON.readValue(body, READINGS);
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(body, 1, body.length - 1));
        int n = in.readInt();
        List<ReadingRecord> records = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String sensorId = in.readUTF();
            String readingId = in.readUTF();
            int data = in.readByte();
            long measuredAt = in.readLong();
            long receivedAt = in.readLong();
            String timeSource = TIME_SOURCES[in.readByte()];
            boolean registered = in.readBoolean();
            String messageId = in.readBoolean() ? in.readUTF() : null;
            records.add(new ReadingRecord(readingId, sensorId, data, measuredAt, receivedAt, timeSource, registered,
                    messageId));
        }
        if (in.available() > 0) {
            throw new IOException("history message has " + in.available() + " bytes after its " + n + " readings");
        }
        return records;
    }

    private static int timeSource(String name) {
        for (int i = 0; i < TIME_SOURCES.length; i++) {
            if (TIME_SOURCES[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown time source " + name);
    }
}
