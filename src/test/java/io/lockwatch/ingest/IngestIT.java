package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Ingest against real RabbitMQ and PostgreSQL: readings published in shuffled order, with duplicates, end in
 * exactly the states and the number of state changes that a plain sequential computation over the same input
 * gives.
 */
@CamelSpringBootTest
@SpringBootTest
@ActiveProfiles("external")
// closed after the class: a cached context would go on consuming and delivering beside the next test
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class IngestIT {

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;
    @Autowired IngestProperties props;

    record Published(String sensor, int data, long ts, String messageId) {
    }

    @Test
    void shuffledReadingsWithDuplicatesEndInTheReferenceStates() {
        Random random = new Random(20261121);
        String prefix = "IT" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
        List<String> sensors = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String id = prefix + String.format("%03d", i);
            sensors.add(id);
            jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", id, "Room " + i);
        }
        long t0 = System.currentTimeMillis() - 200_000L; // recent: within the heartbeat timeout
        List<Published> readings = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            String sensor = sensors.get(random.nextInt(sensors.size()));
            readings.add(new Published(sensor, random.nextInt(2), t0 + i * 10L, UUID.randomUUID().toString()));
        }
        Collections.shuffle(readings, random);
        List<Published> withDuplicates = new ArrayList<>(readings);
        for (int i = 0; i < 500; i++) {
            // a copy delivered again later, as after a publisher retry or a broker redelivery
            int at = random.nextInt(withDuplicates.size());
            int later = at + 1 + random.nextInt(withDuplicates.size() - at);
            withDuplicates.add(later, withDuplicates.get(at));
        }
        double receivedBefore = counter("lockwatch.readings.received");

        // on one channel: the broker keeps the order of one channel's messages, which the reference follows
        rabbit.invoke(ops -> {
            for (Published p : withDuplicates) {
                MessageProperties mp = new MessageProperties();
                mp.setMessageId(p.messageId());
                String body = "{\"sensor_id\":\"" + p.sensor() + "\",\"data\":" + p.data() + ",\"ts\":" + p.ts() + "}";
                ops.send(props.exchange(), p.sensor(), new Message(body.getBytes(StandardCharsets.UTF_8), mp));
            }
            return null;
        });

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(counter("lockwatch.readings.received")).isEqualTo(receivedBefore + withDuplicates.size()));

        // the reference: in delivery order, a reading counts if it is newer than the newest counted one
        Map<String, Long> newest = new HashMap<>();
        Map<String, Integer> state = new HashMap<>();
        Map<String, Integer> changes = new HashMap<>();
        for (Published p : withDuplicates) {
            Long last = newest.get(p.sensor());
            if (last != null && p.ts() <= last) {
                continue;
            }
            newest.put(p.sensor(), p.ts());
            if (!Integer.valueOf(p.data()).equals(state.get(p.sensor()))) {
                changes.merge(p.sensor(), 1, Integer::sum);
            }
            state.put(p.sensor(), p.data());
        }

        Map<String, Integer> storedState = new HashMap<>();
        Map<String, Integer> storedChanges = new HashMap<>();
        jdbc.query("SELECT sensor_id, state FROM sensor_state WHERE sensor_id LIKE ?",
                rs -> { storedState.put(rs.getString(1), rs.getInt(2)); }, prefix + "%");
        // state changes only: the sequence also counts connectivity events
        jdbc.query("SELECT sensor_id, count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.state_changed' GROUP BY sensor_id",
                rs -> { storedChanges.put(rs.getString(1), rs.getInt(2)); }, prefix + "%");
        assertThat(storedState).isEqualTo(state);
        assertThat(storedChanges).isEqualTo(changes);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.state_changed'",
                Integer.class, prefix + "%"))
                .isEqualTo(changes.values().stream().mapToInt(Integer::intValue).sum());
    }

    /**
     * Gateways publishing arrays of readings (each sensor behind one gateway, routed by the gateway's name): every
     * reading is applied as if it had come alone. With partitions, each array lands in one partition and its
     * readings are forwarded to their own.
     */
    @Test
    void arraysOfReadingsFromGatewaysEndInTheReferenceStates() {
        Random random = new Random(20261125);
        String prefix = "GW" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
        List<String> sensors = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            String id = prefix + String.format("%03d", i);
            sensors.add(id);
            jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", id, "Room " + i);
        }
        long t0 = System.currentTimeMillis() - 200_000L;
        Map<String, Integer> state = new HashMap<>();
        Map<String, Integer> changes = new HashMap<>();
        List<Message> arrays = new ArrayList<>();
        List<String> routingKeys = new ArrayList<>();
        int readings = 0;
        for (int a = 0; a < 100; a++) {
            int gateway = a % 3;
            StringBuilder body = new StringBuilder("[");
            int n = 1 + random.nextInt(50);
            for (int i = 0; i < n; i++) {
                // gateway g serves the sensors i with i % 3 == g
                String sensor = sensors.get(gateway + 3 * random.nextInt(sensors.size() / 3));
                int data = random.nextInt(2);
                body.append(i == 0 ? "" : ",").append("{\"sensor_id\":\"").append(sensor).append("\",\"data\":")
                        .append(data).append(",\"ts\":").append(t0 + readings * 10L).append('}');
                if (!Integer.valueOf(data).equals(state.put(sensor, data))) {
                    changes.merge(sensor, 1, Integer::sum);
                }
                readings++;
            }
            MessageProperties mp = new MessageProperties();
            mp.setMessageId(prefix + "-" + a);
            arrays.add(new Message(body.append(']').toString().getBytes(StandardCharsets.UTF_8), mp));
            routingKeys.add("gateway" + gateway);
        }
        double receivedBefore = counter("lockwatch.readings.received");
        int total = readings;

        rabbit.invoke(ops -> {
            for (int i = 0; i < arrays.size(); i++) {
                ops.send(props.exchange(), routingKeys.get(i), arrays.get(i));
            }
            return null;
        });

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(counter("lockwatch.readings.received")).isEqualTo(receivedBefore + total));
        Map<String, Integer> storedState = new HashMap<>();
        Map<String, Integer> storedChanges = new HashMap<>();
        jdbc.query("SELECT sensor_id, state FROM sensor_state WHERE sensor_id LIKE ? AND state IS NOT NULL",
                rs -> { storedState.put(rs.getString(1), rs.getInt(2)); }, prefix + "%");
        jdbc.query("SELECT sensor_id, count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.state_changed' GROUP BY sensor_id",
                rs -> { storedChanges.put(rs.getString(1), rs.getInt(2)); }, prefix + "%");
        assertThat(storedState).isEqualTo(state);
        assertThat(storedChanges).isEqualTo(changes);
    }

    private double counter(String name) {
        var c = meters.find(name).counter();
        return c == null ? 0 : c.count();
    }
}
