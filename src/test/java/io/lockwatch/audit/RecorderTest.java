package io.lockwatch.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RecorderTest {

    final List<AuditLog.Entry> appended = new ArrayList<>();
    final AuditLog log = new AuditLog(null) {
        @Override
        void append(AuditLog.Entry e) {
            appended.add(e);
        }
    };
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Instant now = Instant.parse("2026-12-06T03:00:00.100Z");
    final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    };

    @Test
    void knockingWithoutACredentialFillsNeitherTheLogNorTheServicesLog() {
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        ((Logger) LoggerFactory.getLogger(Recorder.class)).addAppender(lines);
        try {
            Recorder recorder = new Recorder(log, meters, 3, clock);
            for (int i = 0; i < 50; i++) {
                recorder.record(entry("refused", 401));
            }
            recorder.record(entry("succeeded", 201));
            now = now.plusSeconds(1);
            for (int i = 0; i < 5; i++) {
                recorder.record(entry("refused", 403));
            }
            assertThat(appended).filteredOn(e -> e.outcome().equals("refused")).hasSize(6); // 3 a second
            assertThat(appended).filteredOn(e -> e.outcome().equals("succeeded")).hasSize(1); // never held back
            assertThat(meters.counter("lockwatch.audit.refused").count()).isEqualTo(55);
            assertThat(meters.counter("lockwatch.audit.unrecorded", "reason", "over-budget").count()).isEqualTo(49);
            assertThat(lines.list).hasSize(2); // a line a second
            assertThat(lines.list.get(1).getFormattedMessage()).contains("403").contains("(49 more refused since the last such line)");
        } finally {
            ((Logger) LoggerFactory.getLogger(Recorder.class)).detachAppender(lines);
        }
    }

    @Test
    void anEntryTheDatabaseCannotTakeIsLoggedAndCountedAndTheChangeStands() {
        AuditLog away = new AuditLog(null) {
            @Override
            void append(AuditLog.Entry e) {
                throw new org.springframework.dao.DataAccessResourceFailureException("database away");
            }
        };
        new Recorder(away, meters, 3, clock).record(entry("succeeded", 200));
        assertThat(meters.counter("lockwatch.audit.unrecorded", "reason", "database").count()).isEqualTo(1);
    }

    private AuditLog.Entry entry(String outcome, int status) {
        return new AuditLog.Entry(UUID.randomUUID(), now, "anonymous", "anonymous", null, null, "createClient", "POST", "clients",
                null, status, outcome, "10.0.0.1", "curl", null);
    }
}
