package io.lockwatch.api;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.lockwatch.alarms.AlarmStore;
import org.apache.camel.Exchange;

/**
 * Alarms: listed by sensor, client, activity and time; read; acknowledged by an operator; the escalation chains of
 * sensors and of client links; expected-open schedules.
 */
public class AlarmsApi {

    private static final long DAY = 86_400_000L;

    private final AlarmStore store;
    private final io.lockwatch.alarms.OpenSchedules schedules;

    public AlarmsApi(AlarmStore store, io.lockwatch.alarms.OpenSchedules schedules) {
        this.store = store;
        this.schedules = schedules;
    }

    public void list(Exchange exchange) {
        int limit = Json.limit(exchange);
        String sensor = Json.optionalSensorId(exchange, "sensor_id");
        UUID clientId = Json.optionalUuid(exchange, "client_id");
        String activeText = Json.header(exchange, "active");
        Boolean active = null;
        if (activeText != null) {
            if (!activeText.equals("true") && !activeText.equals("false")) {
                throw ApiProblem.badRequest("active", "active must be true or false");
            }
            active = Boolean.valueOf(activeText);
        }
        // [from, to): by default the last 30 days
        long to = Json.time(exchange, "to", System.currentTimeMillis() + 1);
        long from = Json.time(exchange, "from", to - 30 * DAY);
        if (from >= to) {
            throw ApiProblem.badRequest("from", "from must be before to");
        }
        String[] after = Json.timeCursor(Json.header(exchange, "cursor"));
        List<AlarmStore.Alarm> rows = store.list(sensor, clientId, active, from, to,
                after == null ? null : Timestamp.from(Instant.parse(after[0])),
                after == null ? null : UUID.fromString(after[1]), limit);
        UUID caller = callingClient(exchange);
        Json.respond(exchange, 200, Json.pageByTime(rows.stream().map(a -> seenBy(a, caller)).toList(), limit,
                AlarmStore.Alarm::raisedAt, AlarmStore.Alarm::id));
    }

    public void get(Exchange exchange) {
        Json.respond(exchange, 200, seenBy(found(Json.uuid(exchange, "alarmId", "alarm")), callingClient(exchange)));
    }

    public void acknowledge(Exchange exchange) {
        UUID id = Json.uuid(exchange, "alarmId", "alarm");
        RequestBodies.AlarmAcknowledgement ack = Json.bind(exchange, RequestBodies.AlarmAcknowledgement.class);
        switch (store.acknowledge(id, ack.by(), ack.comment())) {
            case NOT_FOUND -> throw ApiProblem.notFound("alarm " + id);
            case ALREADY -> throw ApiProblem.conflict("alarm " + id + " is already acknowledged");
            case DONE -> Json.respond(exchange, 200, seenBy(found(id), callingClient(exchange)));
        }
    }

    public void chain(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        List<AlarmStore.Step> steps = store.chain(sensor);
        if (steps == null) {
            throw ApiProblem.notFound("sensor " + sensor);
        }
        Json.respond(exchange, 200, new ResponseBodies.EscalationChain(steps));
    }

    public void replaceChain(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        List<AlarmStore.Step> steps = steps(exchange);
        List<AlarmStore.Step> replaced = unknownClientNamed(() -> store.replaceChain(sensor, steps));
        if (replaced == null) {
            throw ApiProblem.notFound("sensor " + sensor);
        }
        Json.respond(exchange, 200, new ResponseBodies.EscalationChain(replaced));
    }

    public void linkChain(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        String sensor = SensorsApi.sensorId(exchange);
        List<AlarmStore.Step> steps = store.linkChain(client, sensor);
        if (steps == null) {
            throw ApiProblem.notFound("a link of client " + client + " to sensor " + sensor);
        }
        Json.respond(exchange, 200, new ResponseBodies.EscalationChain(seenBy(steps, callingClient(exchange))));
    }

    public void replaceLinkChain(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        String sensor = SensorsApi.sensorId(exchange);
        List<AlarmStore.Step> steps = steps(exchange);
        UUID caller = callingClient(exchange);
        if (caller != null) {
            ownClientOnly(steps, caller);
        }
        List<AlarmStore.Step> replaced;
        try {
            replaced = unknownClientNamed(() -> store.replaceLinkChain(client, sensor, steps, caller != null));
        } catch (AlarmStore.SetByAnOperator e) {
            throw ApiProblem.forbidden(e.getMessage(), List.of());
        }
        if (replaced == null) {
            throw ApiProblem.notFound("a link of client " + client + " to sensor " + sensor);
        }
        Json.respond(exchange, 200, new ResponseBodies.EscalationChain(seenBy(replaced, caller)));
    }

    /**
     * A client key's chain names its own client only, until a client has destinations of its own: another client's id
     * would have its alarms sent to that client's endpoint, signed with its secret. Another's id and one that names
     * nobody get the same answer, so that nothing confirms an id.
     */
    private static void ownClientOnly(List<AlarmStore.Step> steps, UUID caller) {
        for (AlarmStore.Step s : steps) {
            if (!caller.equals(s.clientId())) {
                throw ApiProblem.badRequest("steps[" + (s.step() - 1) + "].client_id", "client " + s.clientId()
                        + " is not this key's: a client key names its own client only in an escalation step");
            }
        }
    }

    /** The client whose key calls, or null for an operator's token. */
    private static UUID callingClient(Exchange exchange) {
        io.lockwatch.selfservice.ClientKeys.Holder key = ClientScope.holder(exchange);
        return key == null ? null : key.clientId();
    }

    /**
     * An alarm as a client's key is shown it: of its escalation, only the steps sent to that client, of the sensor's
     * chain or of its own; another client's chain, or a step to another client, would name that client. The
     * operator (null) sees it whole.
     */
    private static AlarmStore.Alarm seenBy(AlarmStore.Alarm alarm, UUID client) {
        if (client == null) {
            return alarm;
        }
        return alarm.withEscalation(alarm.escalation().stream()
                .filter(e -> client.equals(e.clientId()) && (e.chainClientId() == null || client.equals(e.chainClientId())))
                .toList());
    }

    /** A chain as a client's key is shown it: its steps to that client. */
    private static List<AlarmStore.Step> seenBy(List<AlarmStore.Step> steps, UUID client) {
        return client == null ? steps : steps.stream().filter(s -> client.equals(s.clientId())).toList();
    }

    /** The chain in the request, its steps numbered from 1. */
    private static List<AlarmStore.Step> steps(Exchange exchange) {
        RequestBodies.EscalationChainChange chain = Json.bind(exchange, RequestBodies.EscalationChainChange.class);
        List<AlarmStore.Step> steps = new java.util.ArrayList<>();
        for (RequestBodies.EscalationChainChange.Step s : chain.steps()) {
            steps.add(new AlarmStore.Step(steps.size() + 1, s.afterSeconds(), s.clientId()));
        }
        return steps;
    }

    private static <T> T unknownClientNamed(java.util.function.Supplier<T> replace) {
        try {
            return replace.get();
        } catch (AlarmStore.UnknownClient e) {
            throw ApiProblem.badRequest("steps[" + (e.step - 1) + "].client_id", e.getMessage());
        }
    }

    public void schedule(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        io.lockwatch.alarms.OpenSchedules.View view = schedules.find(sensor);
        if (view == null) {
            throw ApiProblem.notFound(schedules.sensorExists(sensor) ? "an expected-open schedule of sensor " + sensor
                    : "sensor " + sensor);
        }
        Json.respond(exchange, 200, view);
    }

    public void replaceSchedule(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        RequestBodies.OpenScheduleChange body = Json.bind(exchange, RequestBodies.OpenScheduleChange.class);
        var view = new io.lockwatch.alarms.OpenSchedules.View(body.timeZone(), body.ranges().stream()
                .map(r -> new io.lockwatch.alarms.OpenSchedules.RangeView(r.days(), r.from(), r.to())).toList());
        try {
            if (!schedules.replace(sensor, view)) {
                throw ApiProblem.notFound("sensor " + sensor);
            }
        } catch (io.lockwatch.alarms.OpenSchedules.Refused e) {
            throw ApiProblem.badRequest(e.field, e.getMessage());
        }
        Json.respond(exchange, 200, schedules.find(sensor));
    }

    public void deleteSchedule(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        if (!schedules.delete(sensor)) {
            throw ApiProblem.notFound("an expected-open schedule of sensor " + sensor);
        }
        Json.respond(exchange, 204, null);
    }

    private AlarmStore.Alarm found(UUID id) {
        AlarmStore.Alarm alarm = store.find(id);
        if (alarm == null) {
            throw ApiProblem.notFound("alarm " + id);
        }
        return alarm;
    }
}
