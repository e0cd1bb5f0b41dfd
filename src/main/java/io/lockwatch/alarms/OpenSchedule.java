package io.lockwatch.alarms;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * When a sensor's door is expected to be open: weekly ranges in a time zone. Within a range an open door raises no
 * alarm; a door still open when a range ends has its alarm's timer start then. Ranges are wall-clock times, so a
 * range on a daylight-saving switch day is as long as the zone's rules make it (08:00–19:00 is 10 or 12 real hours
 * there, 00:00–04:00 is 3 or 5); a wall-clock time that does not exist that day is taken as the zone's rules move it.
 *
 * @param ranges each with its days (when it starts), its start, and its end; an end not after the start is the
 *               next day's
 */
public record OpenSchedule(ZoneId zone, List<Range> ranges) {

    public record Range(Set<DayOfWeek> days, LocalTime from, LocalTime to) {
    }

    /** How far back and ahead a range is looked for: a week and a day covers every weekly range. */
    private static final int DAYS_AROUND = 8;

    /**
     * When the alarm of a door opened at {@code openedAt} is due, with {@code threshold} seconds open outside the
     * ranges: the timer runs from the opening, or from the end of the range the door is in, and starts again at the
     * end of a range that begins before it runs out.
     */
    public Instant alarmDue(Instant openedAt, long thresholdSeconds) {
        Instant start = openedAt;
        for (int guard = 0; guard < 1000; guard++) {
            Instant due = start.plusSeconds(thresholdSeconds);
            Instant[] range = firstRangeOverlapping(start, due);
            if (range == null) {
                return due;
            }
            start = range[1]; // the timer stops in the range, and starts again at its end
        }
        throw new IllegalStateException("a schedule whose ranges cover every moment never lets an alarm fall due");
    }

    /** The range (its start and end) overlapping [from, to) that starts first, or null. */
    private Instant[] firstRangeOverlapping(Instant from, Instant to) {
        Instant[] first = null;
        LocalDate day = from.atZone(zone).toLocalDate().minusDays(DAYS_AROUND);
        LocalDate last = to.atZone(zone).toLocalDate().plusDays(1);
        for (; !day.isAfter(last); day = day.plusDays(1)) {
            for (Range r : ranges) {
                if (!r.days().contains(day.getDayOfWeek())) {
                    continue;
                }
                Instant s = ZonedDateTime.of(day, r.from(), zone).toInstant();
                // an end not after the start (24:00 is 00:00) is the next day's
                LocalDate endDay = r.to().isAfter(r.from()) ? day : day.plusDays(1);
                Instant e = ZonedDateTime.of(endDay, r.to(), zone).toInstant();
                if (s.isBefore(to) && e.isAfter(from) && (first == null || s.isBefore(first[0]))) {
                    first = new Instant[] {s, e};
                }
            }
        }
        return first;
    }

    /** A day's name as the API writes it: mon, tue, … */
    public static String dayName(DayOfWeek d) {
        return d.name().substring(0, 3).toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException for a name that is not one */
    public static DayOfWeek day(String name) {
        for (DayOfWeek d : DayOfWeek.values()) {
            if (dayName(d).equals(name)) {
                return d;
            }
        }
        throw new IllegalArgumentException("not a day: " + name);
    }
}
