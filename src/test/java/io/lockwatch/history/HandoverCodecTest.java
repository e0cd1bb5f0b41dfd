package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import org.junit.jupiter.api.Test;

class HandoverCodecTest {

    private static final long T0 = 1_764_000_000_000L;

    @Test
    void everyFieldOfEveryKindOfReadingComesBackAsItWent() throws IOException {
        List<ReadingRecord> sent = List.of(
                new ReadingRecord("S1/m-1", "S1", 1, T0, T0 + 3, "reading", true, "m-1"),
                new ReadingRecord("S2@" + T0 + "=0", "S2", 0, T0, T0 + 4, "amqp_timestamp", false, null),
                new ReadingRecord("S3#5f0c", "S3", 1, T0 - 1, T0, "receipt", true, null),
                // a publisher's id may hold any character, and an array's element gets '#index' after it
                new ReadingRecord("S4/Tür ü 🚪#999", "S4", 0, Long.MAX_VALUE, Long.MIN_VALUE, "reading", true, "Tür ü 🚪#999"));

        assertThat(HandoverCodec.decode(HandoverCodec.encode(sent))).isEqualTo(sent);
    }

    @Test
    void aFullPartIsUnderTheBrokersMessageLimitAndATypicalOneLessThanHalfItsJson() throws IOException {
        List<ReadingRecord> part = new ArrayList<>();
        String longestId = "x".repeat(128) + "#999";
        for (int i = 0; i < HistorySteps.RECORDS_PER_MESSAGE; i++) {
            part.add(new ReadingRecord("ABCDEFGH12345678/" + longestId, "ABCDEFGH12345678", i % 2, T0 + i, T0 + i,
                    "reading", true, longestId));
        }
        assertThat(HandoverCodec.encode(part).length).as("the longest ids").isLessThan(128 * 1024);

        List<ReadingRecord> typical = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            typical.add(new ReadingRecord("B0000001234@" + (T0 + i) + "=1", "B0000001234", 1, T0 + i, T0 + i + 2,
                    "reading", true, null));
        }
        assertThat(HandoverCodec.encode(typical).length)
                .isLessThan(new ObjectMapper().writeValueAsBytes(typical).length / 2);
    }

    @Test
    void aMessageQueuedAsJsonByAnEarlierVersionIsStillRead() throws IOException {
        List<ReadingRecord> sent = List.of(new ReadingRecord("S1/m-1", "S1", 1, T0, T0 + 3, "reading", true, "m-1"));
        byte[] json = new ObjectMapper().writeValueAsBytes(sent);

        assertThat(HandoverCodec.decode(json)).isEqualTo(sent);
    }

    @Test
    void aBodyNeitherFormReadsIsRefusedNotMisread() throws IOException {
        byte[] encoded = HandoverCodec.encode(List.of(
                new ReadingRecord("S1/m-1", "S1", 1, T0, T0 + 3, "reading", true, "m-1")));
        byte[] longer = java.util.Arrays.copyOf(encoded, encoded.length + 1);
        byte[] shorter = java.util.Arrays.copyOf(encoded, encoded.length - 1);

        assertThatThrownBy(() -> HandoverCodec.decode(longer)).isInstanceOf(IOException.class).hasMessageContaining("after");
        assertThatThrownBy(() -> HandoverCodec.decode(shorter)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> HandoverCodec.decode("not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class);
    }
}
