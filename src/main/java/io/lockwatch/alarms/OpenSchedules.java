package io.lockwatch.alarms;

import java.time.DayOfWeek;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.springframework.jdbc.core.JdbcTemplate;

/** Sensors' expected-open schedules in PostgreSQL ({@code sensor_open_schedules}), as the API gives and reads them. */
public class OpenSchedules {

    /** A schedule as the API writes it: a zone id, and ranges of day names and HH:MM times. */
    public record View(String timeZone, List<RangeView> ranges) {
    }

    public record RangeView(List<String> days, String from, String to) {
    }

    /** A schedule refused, saying which field and why. */
    public static class Refused extends RuntimeException {
        public final String field;

        Refused(String field, String message) {
            super(message);
            this.field = field;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final JdbcTemplate jdbc;
    private final Integer defaultOpenSeconds;

    /** @param defaultOpenSeconds lockwatch.alarms.open-after; null: off */
    public OpenSchedules(JdbcTemplate jdbc, Integer defaultOpenSeconds) {
        this.jdbc = jdbc;
        this.defaultOpenSeconds = defaultOpenSeconds;
    }

    /** The sensor's schedule, or null if it has none (or there is no such sensor: {@link #sensorExists}). */
    public View find(String sensorId) {
        List<View> found = jdbc.query("SELECT time_zone, ranges::text FROM sensor_open_schedules WHERE sensor_id = ?",
                (rs, i) -> view(parse(rs.getString(1), rs.getString(2))), sensorId);
        return found.isEmpty() ? null : found.get(0);
    }

    public boolean sensorExists(String sensorId) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM sensors WHERE id = ?)", Boolean.class,
                sensorId));
    }

    /**
     * Sets the sensor's schedule: for the doors it has open now too, whose deadline the next alarm scan puts where
     * the schedule says. False if there is no such sensor.
     */
    public boolean replace(String sensorId, View given) {
        OpenSchedule schedule = check(given);
        if (!sensorExists(sensorId)) {
            return false;
        }
        jdbc.update("""
                INSERT INTO sensor_open_schedules (sensor_id, time_zone, ranges) VALUES (?, ?, ?::jsonb)
                ON CONFLICT (sensor_id) DO UPDATE SET time_zone = excluded.time_zone, ranges = excluded.ranges,
                                                      updated_at = now()""",
                sensorId, schedule.zone().getId(), json(schedule));
        return true;
    }

    /** Removes it: a door open now without its alarm yet is due its threshold after it opened. False if it had none. */
    public boolean delete(String sensorId) {
        if (jdbc.update("DELETE FROM sensor_open_schedules WHERE sensor_id = ?", sensorId) == 0) {
            return false;
        }
        jdbc.update("""
                UPDATE sensor_state st
                   SET alarm_due_at = st.state_changed_at + make_interval(secs => coalesce(st.open_alarm_seconds, ?::integer))
                 WHERE st.sensor_id = ? AND st.state = 0 AND st.alarm_due_at IS NOT NULL""", defaultOpenSeconds, sensorId);
        return true;
    }

    /** A schedule as stored. */
    static OpenSchedule parse(String zone, String ranges) {
        try {
            List<OpenSchedule.Range> parsed = new ArrayList<>();
            for (JsonNode r : JSON.readTree(ranges)) {
                Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
                r.get("days").forEach(d -> days.add(OpenSchedule.day(d.asText())));
                parsed.add(new OpenSchedule.Range(days, time(r.get("from").asText()), time(r.get("to").asText())));
            }
            return new OpenSchedule(ZoneId.of(zone), parsed);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a stored schedule is not the JSON it was written as", e);
        }
    }

    private static OpenSchedule check(View given) {
        ZoneId zone;
        try {
            zone = ZoneId.of(given.timeZone());
        } catch (java.time.DateTimeException e) {
            throw new Refused("time_zone", "not a time zone id (as Europe/Moscow): " + given.timeZone());
        }
        List<OpenSchedule.Range> ranges = new ArrayList<>();
        for (int i = 0; i < given.ranges().size(); i++) {
            RangeView r = given.ranges().get(i);
            Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
            for (String d : r.days()) {
                days.add(OpenSchedule.day(d)); // the contract lists the names
            }
            LocalTime from, to;
            try {
                from = time(r.from());
                to = time(r.to());
            } catch (DateTimeParseException e) {
                throw new Refused("ranges[" + i + "]", "a time is HH:MM (00:00 to 24:00)");
            }
            if (from.equals(to) && !"24:00".equals(r.to())) {
                throw new Refused("ranges[" + i + "].to", "a range ends after it starts (or, ending earlier, the next day)");
            }
            ranges.add(new OpenSchedule.Range(days, from, to));
        }
        OpenSchedule schedule = new OpenSchedule(zone, ranges);
        try {
            schedule.alarmDue(java.time.Instant.now(), 60);
        } catch (IllegalStateException e) {
            throw new Refused("ranges", "the ranges cover every moment, so no alarm would ever be raised; "
                    + "take the sensor's threshold away instead");
        }
        return schedule;
    }

    private static LocalTime time(String text) {
        return "24:00".equals(text) ? LocalTime.MIDNIGHT : LocalTime.parse(text);
    }

    /** An end at midnight as it was given: the end of the day. */
    private static String end(LocalTime to) {
        return to.equals(LocalTime.MIDNIGHT) ? "24:00" : to.toString();
    }

    private static String json(OpenSchedule schedule) {
        ArrayNode ranges = JSON.createArrayNode();
        for (OpenSchedule.Range r : schedule.ranges()) {
            ObjectNode o = ranges.addObject();
            ArrayNode days = o.putArray("days");
            r.days().stream().sorted().forEach(d -> days.add(OpenSchedule.dayName(d)));
            o.put("from", r.from().toString());
            o.put("to", end(r.to()));
        }
        return ranges.toString();
    }

    private static View view(OpenSchedule schedule) {
        List<RangeView> ranges = new ArrayList<>();
        for (OpenSchedule.Range r : schedule.ranges()) {
            ranges.add(new RangeView(r.days().stream().sorted().map(OpenSchedule::dayName).toList(), r.from().toString(),
                    end(r.to())));
        }
        return new View(schedule.zone().getId(), ranges);
    }
}
