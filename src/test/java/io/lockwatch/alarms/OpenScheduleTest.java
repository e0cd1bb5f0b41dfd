package io.lockwatch.alarms;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.List;

import org.junit.jupiter.api.Test;

/** When an open door's alarm falls due under an expected-open schedule, daylight-saving switch days included. */
class OpenScheduleTest {

    static final ZoneId MOSCOW = ZoneId.of("Europe/Moscow"), BERLIN = ZoneId.of("Europe/Berlin");
    static final OpenSchedule OFFICE_HOURS = new OpenSchedule(MOSCOW, List.of(new OpenSchedule.Range(
            EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.FRIDAY), LocalTime.of(8, 0), LocalTime.of(19, 0))));

    @Test
    void aDoorOpenWithinItsRangeHasItsTimerStartWhenTheRangeEnds() {
        // Monday 2026-11-23
        assertThat(due(OFFICE_HOURS, "2026-11-23T10:00", 600)).isEqualTo(at(MOSCOW, "2026-11-23T19:10"));
        assertThat(due(OFFICE_HOURS, "2026-11-27T18:00", 600)).as("Friday: no range on Saturday")
                .isEqualTo(at(MOSCOW, "2026-11-27T19:10"));
    }

    @Test
    void aRangeThatBeginsBeforeTheTimerRunsOutStopsItUntilTheRangeEnds() {
        assertThat(due(OFFICE_HOURS, "2026-11-23T07:55", 600)).isEqualTo(at(MOSCOW, "2026-11-23T19:10"));
        assertThat(due(OFFICE_HOURS, "2026-11-23T07:45", 600)).as("due before the range: raised")
                .isEqualTo(at(MOSCOW, "2026-11-23T07:55"));
    }

    @Test
    void outsideEveryRangeTheThresholdIsAsEver() {
        assertThat(due(OFFICE_HOURS, "2026-11-23T20:00", 600)).isEqualTo(at(MOSCOW, "2026-11-23T20:10"));
        assertThat(due(OFFICE_HOURS, "2026-11-28T10:00", 600)).as("Saturday").isEqualTo(at(MOSCOW, "2026-11-28T10:10"));
    }

    @Test
    void aRangeOverMidnightEndsTheNextDay() {
        OpenSchedule nights = new OpenSchedule(MOSCOW, List.of(new OpenSchedule.Range(EnumSet.allOf(DayOfWeek.class),
                LocalTime.of(22, 0), LocalTime.of(6, 0))));
        assertThat(due(nights, "2026-11-23T23:00", 600)).isEqualTo(at(MOSCOW, "2026-11-24T06:10"));
        assertThat(due(nights, "2026-11-24T02:00", 600)).as("in the range begun the day before")
                .isEqualTo(at(MOSCOW, "2026-11-24T06:10"));
    }

    /**
     * Sunday 00:00–04:00 in Berlin is three real hours on 2026-03-29 (02:00 becomes 03:00) and five on 2026-10-25
     * (03:00 becomes 02:00 again): the timer starts at 04:00 as the wall clock shows it either way.
     */
    @Test
    void onADaylightSavingSwitchDayTheRangeEndsAtItsWallClockTime() {
        OpenSchedule sundayNights = new OpenSchedule(BERLIN, List.of(new OpenSchedule.Range(EnumSet.of(DayOfWeek.SUNDAY),
                LocalTime.of(0, 0), LocalTime.of(4, 0))));

        Instant spring = due(sundayNights, BERLIN, "2026-03-29T00:30", 600);
        assertThat(spring).isEqualTo(Instant.parse("2026-03-29T02:10:00Z")); // 04:10 CEST
        assertThat(spring.getEpochSecond() - at(BERLIN, "2026-03-29T00:30").getEpochSecond())
                .as("3 h 40 min of wall clock, an hour of it skipped").isEqualTo(2 * 3600 + 40 * 60);

        Instant autumn = due(sundayNights, BERLIN, "2026-10-25T00:30", 600);
        assertThat(autumn).isEqualTo(Instant.parse("2026-10-25T03:10:00Z")); // 04:10 CET
        assertThat(autumn.getEpochSecond() - at(BERLIN, "2026-10-25T00:30").getEpochSecond())
                .as("the hour repeated counts").isEqualTo(4 * 3600 + 40 * 60);
    }

    private static Instant due(OpenSchedule s, String openedLocal, long threshold) {
        return due(s, s.zone(), openedLocal, threshold);
    }

    private static Instant due(OpenSchedule s, ZoneId zone, String openedLocal, long threshold) {
        return s.alarmDue(at(zone, openedLocal), threshold);
    }

    private static Instant at(ZoneId zone, String local) {
        return LocalDateTime.parse(local).atZone(zone).toInstant();
    }
}
