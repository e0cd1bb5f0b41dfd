package io.lockwatch.notify;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.infra.metrics.PipelineStages;
import io.lockwatch.infra.tracing.Traces;
import io.lockwatch.notify.NotificationStore.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.tracing.Span;
import org.apache.camel.Exchange;
import org.apache.camel.support.SynchronizationAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps of the notification routes ({@code routes/notify.camel.yaml}): claim what is due, turn each claimed
 * notification into a signed Standard Webhooks POST, and record how its attempt went.
 */
public class Notifications {

    private static final Logger log = LoggerFactory.getLogger(Notifications.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter RFC3339_MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final NotificationStore store;
    private final AttemptRecorder recorder;
    private final Lanes lanes;
    private final ClaimWakeUp wakeUps;
    private final Duration memberTimeout;
    private final TargetGuard guard;
    private final NotifyProperties props;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The last claim had less room than its lanes wanted: it was cut short by this instance's request slots. */
    private volatile boolean cutShort;
    private final Map<String, Counter> outcomes = new LinkedHashMap<>();
    private final Timer latency;
    private final HttpClient alertClient;
    private final RetryPolicy retries;
    private final Counter pausedClients;
    private final Traces traces;
    /** How long claims take, by whether they looked for due work of every client or only of the lanes given. */
    private final Timer claimsEverywhere;
    private final Timer claimsOfLanes;
    private final Timer committedToClaimed, claimedToSent, sentToAnswered;

    /** @param memberTimeout how long an instance counts as alive after it last renewed its membership */
    public Notifications(NotificationStore store, AttemptRecorder recorder, Lanes lanes, ClaimWakeUp wakeUps,
                         Duration memberTimeout, TargetGuard guard, NotifyProperties props, MeterRegistry meters,
                         Traces traces) {
        this.memberTimeout = memberTimeout;
        this.traces = traces;
        this.store = store;
        this.recorder = recorder;
        this.lanes = lanes;
        this.wakeUps = wakeUps;
        this.guard = guard;
        this.props = props;
        for (String outcome : List.of("delivered", "retry", "dead", "cancelled", "refused")) {
            outcomes.put(outcome, meters.counter("lockwatch.notifications", "outcome", outcome));
        }
        this.latency = Timer.builder("lockwatch.notification.latency")
                .description("from the event's measured time to the client's 2xx answer")
                .publishPercentileHistogram().register(meters);
        meters.gauge("lockwatch.notifications.in.flight", inFlight);
        this.alertClient = HttpClient.newBuilder().connectTimeout(props.connectTimeout()).build();
        this.retries = new RetryPolicy(props.retrySchedule(), props.maxRetryAfter(),
                () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble());
        this.pausedClients = meters.counter("lockwatch.clients.paused");
        this.claimsEverywhere = claims(meters, "everywhere");
        this.claimsOfLanes = claims(meters, "lanes");
        this.committedToClaimed = PipelineStages.timer(meters, "committed_to_claimed");
        this.claimedToSent = PipelineStages.timer(meters, "claimed_to_sent");
        this.sentToAnswered = PipelineStages.timer(meters, "sent_to_answered");
    }

    private static Timer claims(MeterRegistry meters, String looked) {
        return Timer.builder("lockwatch.notifications.claims").tag("looked", looked)
                .description("claims of due notifications: for every client with due work, or for the lanes known to "
                        + "have some")
                .register(meters);
    }

    /**
     * Claims what the lanes with room and work can take now, within this instance's free request slots, shared out
     * in turns where those are fewer (NotificationStore#claim), as requests ({@link Dispatch}: one notification, or a
     * batch of a client that asked for them). On the poll and after the heartbeat, the alarms or the API recorded
     * some, it looks for due work of every client. Notifications of clients that are gone or unlinked are cancelled.
     * Nothing claimed is put back: a lane is claimed only what it has room for.
     */
    public synchronized List<Dispatch> claim() {
        long committedSince = wakeUps.takeCommittedSince();
        boolean everywhere = wakeUps.takeLookEverywhere();
        int free = props.maxConcurrent() - inFlight.get();
        if (free <= 0) {
            cutShort = true;
            if (everywhere) {
                wakeUps.lookEverywhereNextTime();
            }
            wakeUps.putBackCommittedSince(committedSince);
            return List.of();
        }
        Map<UUID, Lanes.Room> room = lanes.room(everywhere);
        if (!everywhere && room.isEmpty()) {
            wakeUps.putBackCommittedSince(committedSince);
            return List.of();
        }
        long began = System.nanoTime();
        List<Delivery> claimed = store.claim(room, everywhere, lanes.roomOfANewLane(), free, props.lease());
        long claimedAt = System.nanoTime();
        (everywhere ? claimsEverywhere : claimsOfLanes).record(Duration.ofNanos(claimedAt - began));
        if (committedSince != 0 && !claimed.isEmpty()) {
            committedToClaimed.record(claimedAt - committedSince, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        // each client's, in the order they came due: cut into requests as the claim counted them, the notifications
        // of clients that are gone or unlinked cancelled first (a failure there takes no slot: the claimed rows come
        // back when their lease runs out)
        Map<UUID, List<Delivery>> byClient = new LinkedHashMap<>();
        claimed.forEach(d -> byClient.computeIfAbsent(d.clientId(), c -> new ArrayList<>()).add(d));
        Map<UUID, Integer> requests = new HashMap<>();
        Set<UUID> givenAllTheyAskedFor = new HashSet<>();
        List<Dispatch> toSend = new ArrayList<>(claimed.size());
        int claimedRequests = 0;
        for (Map.Entry<UUID, List<Delivery>> lane : byClient.entrySet()) {
            UUID client = lane.getKey();
            List<Delivery> deliveries = lane.getValue();
            int perRequest = deliveries.get(0).maxEventsPerRequest();
            claimedRequests += (deliveries.size() + perRequest - 1) / perRequest;
            Lanes.Room asked = room.get(client);
            if (deliveries.size() >= (asked == null ? lanes.roomOfANewLane() : asked.room()) * perRequest) {
                givenAllTheyAskedFor.add(client);
            }
            List<Delivery> sendable = new ArrayList<>(deliveries.size());
            for (Delivery d : deliveries) {
                if (d.url() == null || !d.linked()) {
                    store.cancel(d);
                    outcomes.get("cancelled").increment();
                } else {
                    sendable.add(d);
                }
            }
            for (int i = 0; i < sendable.size(); i += perRequest) {
                toSend.add(new Dispatch(sendable.subList(i, Math.min(sendable.size(), i + perRequest)), claimedAt));
                requests.merge(client, 1, Integer::sum);
            }
        }
        cutShort = claimedRequests >= free;
        lanes.claimed(room, requests, givenAllTheyAskedFor, cutShort);
        inFlight.addAndGet(toSend.size());
        return toSend;
    }

    /**
     * On the poll: each client's lane in this instance may have its bound divided by the instances alive now, so that
     * with several instances an endpoint's requests in flight stay within the bound. An instance that is gone counts
     * until its membership times out ({@code lockwatch.ingest.member-timeout}); a new one from its first round.
     */
    public void shareLanesAmongTheInstances() {
        lanes.shareAmong(store.liveInstances(memberTimeout));
    }

    /** Whether the poster may send this attempt (the route's choice): the reason it may not is its refusal. */
    public boolean postable(Attempt.Prepared prepared) {
        return prepared.isPostable();
    }

    /**
     * Whether a claim should follow this finished attempt at once: its lane has due work and room again (a newer
     * notification of the same queue became due, found by the record's own transaction, or the lane's last claim took
     * all it had room for), or the last claim was cut short by this instance's slots and one is free now. Asked as
     * each attempt finishes (routes/notify.camel.yaml), so a lane keeps its limit in flight; the wake-ups that come
     * while a claim runs are one, so the claims gather as the lanes get busier.
     */
    public boolean moreDue(Attempt.Recorded recorded) {
        return lanes.hasWorkAndRoom(recorded.client()) || (cutShort && inFlight.get() < props.maxConcurrent());
    }

    /**
     * Prepare: one claimed request (a notification, or a client's batch of them as a JSON array) as a signed Standard
     * Webhooks request, or the reason it may not be sent (the form of its URL here; its addresses when the poster
     * connects, TargetGuard).
     */
    public Attempt.Prepared prepare(Dispatch dispatch, Exchange exchange) throws JsonProcessingException {
        Delivery d = dispatch.first();
        long started = System.currentTimeMillis();
        // the request slot and the slot of the client's lane, both taken by the claim: given back when the attempt is
        // recorded (the lane then learning from its answer), or uncounted if the exchange ends before that,
        // a failure of this step included
        Attempt.Held held = new Attempt.Held();
        exchange.getExchangeExtension().addOnCompletion(new SynchronizationAdapter() {
            @Override
            public void onDone(Exchange done) {
                endSpan(held, done.getException());
                if (held.laneSlot.compareAndSet(true, false)) {
                    lanes.giveBack(d.clientId());
                }
                free(held.slot);
            }
        });
        String body = JSON.writeValueAsString(dispatch.batched()
                ? dispatch.deliveries().stream().map(Notifications::payload).toList() : payload(d));
        long timestamp = Instant.now().getEpochSecond();
        String webhookId = dispatch.webhookId();
        Map<String, String> headers = new LinkedHashMap<>(8);
        headers.put("webhook-id", webhookId);
        headers.put("webhook-timestamp", String.valueOf(timestamp));
        if (d.secret() != null) {
            headers.put("webhook-signature",
                    WebhookSigner.header(d.secret(), d.previousSecret(), webhookId, timestamp, body));
        }
        Span span = traces.startUnder(d.traceParent(), "webhook POST", Span.Kind.CLIENT);
        held.span.set(span);
        claimedToSent.record(System.nanoTime() - dispatch.claimedAtNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        if (span != null) {
            span.tag("http.request.method", "POST");
            Traces.tag(span, "server.address", hostOf(d.url()));
            span.tag("lockwatch.notification.id", d.id().toString());
            span.tag("lockwatch.client.id", d.clientId().toString());
            span.tag("lockwatch.sensor.id", d.sensorId());
            span.tag("lockwatch.event.type", d.type());
            span.tag("lockwatch.attempt", String.valueOf(d.attempt()));
            if (dispatch.batched()) {
                span.tag("lockwatch.batch.size", String.valueOf(dispatch.deliveries().size()));
            }
            // the client may join the trace: its handling of the webhook becomes a span under this attempt
            traces.inject(span, headers::put);
        }
        String refused = d.secret() == null ? NotificationStore.SECRET_UNOPENED : guard.problemWithForm(d.url());
        return new Attempt.Prepared(dispatch, started, new Attempt.Request(d.url(), headers, body), refused, held);
    }

    /** The URL's host for the attempt's span; null if it has none or is no URL (then refused by the guard). */
    private static String hostOf(String url) {
        try {
            return url == null ? null : URI.create(url).getHost();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** An attempt that did not deliver, as its span shows it. */
    private static final class WebhookFailed extends RuntimeException {
        WebhookFailed(String error) {
            super(error, null, false, false);
        }
    }

    private static void endSpan(Attempt.Held held, Throwable error) {
        Span span = held.span.getAndSet(null);
        if (span != null) {
            Traces.end(span, error);
        }
    }

    private void free(AtomicBoolean slot) {
        if (slot.compareAndSet(true, false)) {
            inFlight.decrementAndGet();
        }
    }

    /**
     * Handle the result: the attempt is recorded delivered on 2xx; else with the next attempt by the retry policy, or
     * dead after the last. An endpoint that answers 410 Gone, or has failed without a success for
     * {@code pause-after-failing}, pauses its client.
     */
    public Attempt.Recorded record(Attempt attempt) {
        Attempt.Prepared prepared = attempt.prepared();
        Dispatch dispatch = prepared.dispatch();
        Delivery first = dispatch.first();
        long started = prepared.startedAt();
        long duration = System.currentTimeMillis() - started;
        WebhookPoster.Answer answer = attempt.answer();
        Integer status = answer == null ? null : answer.status();
        String refused = prepared.refusal();
        if (refused == null && answer != null) {
            refused = answer.refusal();
        }
        String error = refused != null ? "target refused: " + refused : answer == null ? "no answer" : answer.error();
        boolean success = error == null;

        // the request's answer is every notification's in it: each delivered, or each failed and scheduled by its own
        // count of attempts
        Instant now = Instant.now();
        List<FinishedAttempt> finished = new ArrayList<>(dispatch.deliveries().size());
        for (Delivery d : dispatch.deliveries()) {
            RetryPolicy.Decision decision = retries.after(d.attempt(), !success, status,
                    answer == null ? null : answer.retryAfter(), now);
            Outcome outcome = decision instanceof RetryPolicy.Delivered ? Outcome.DELIVERED
                    : decision instanceof RetryPolicy.Retry ? Outcome.RETRY : Outcome.DEAD;
            Instant next = decision instanceof RetryPolicy.Retry retry ? retry.at() : null;
            finished.add(new FinishedAttempt(d, status, error, started, duration, outcome, next));
        }
        Attempt.Held held = prepared.held();
        long tookNanos = attempt instanceof Attempt.Posted posted ? posted.tookNanos() : 0;
        if (attempt instanceof Attempt.Posted) {
            sentToAnswered.record(tookNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        LaneLimit.Signal signal = LaneLimit.signal(status, refused != null);
        boolean endpointOk = success || refused != null;
        // once committed, and before the poster is answered: the slots go back, so that the claim any poster of the
        // group wakes sees them all free; and a successor now due is its lane's work
        recorder.record(finished, successorDue -> {
            if (held.laneSlot.compareAndSet(true, false)) {
                lanes.leave(first.clientId(), endpointOk, signal, tookNanos);
            }
            if (successorDue) {
                lanes.workWaits(first.clientId());
            }
            free(held.slot);
        });
        Span span = held.span.get();
        if (span != null) {
            Traces.tag(span, "http.response.status_code", status);
            Traces.tag(span, "network.protocol.version", answer == null ? null : answer.protocol());
            span.tag("lockwatch.outcome", finished.get(0).outcome().name().toLowerCase(java.util.Locale.ROOT));
            Traces.tag(span, "lockwatch.next_attempt_at", finished.get(0).nextAttemptAt());
        }
        endSpan(held, success ? null : new WebhookFailed(error));
        // recorded: nothing after this may fail the step, or the route would retry it and record the attempt twice
        for (FinishedAttempt f : finished) {
            Delivery d = f.delivery();
            switch (f.outcome()) {
                case DELIVERED -> {
                    outcomes.get("delivered").increment();
                    latency.record(Duration.ofMillis(Math.max(0, System.currentTimeMillis() - d.occurredAt())));
                }
                case RETRY -> outcomes.get(refused != null ? "refused" : "retry").increment();
                case DEAD -> {
                    outcomes.get("dead").increment();
                    log.warn("Notification {} of sensor {} to client {} is dead after {} attempts: {}",
                            d.id(), d.sensorId(), d.clientId(), d.attempt(), error);
                    alert(deadAlert(d, error));
                }
            }
        }
        if (!success) {
            pauseIfGoneOrFailingTooLong(first, status);
        }
        return new Attempt.Recorded(first.clientId());
    }

    /**
     * A 410 Gone, or failing without a success for too long, pauses the client. After the record: if the database
     * cannot do it now, the endpoint's next failure will (the step must not fail, or the attempt is recorded twice).
     */
    private void pauseIfGoneOrFailingTooLong(Delivery d, Integer status) {
        String gone = "the endpoint answered 410 Gone";
        try {
            if (status != null && status == 410) {
                if (store.pause(d.clientId(), gone)) {
                    paused(d.clientId(), gone);
                }
            } else if (store.pauseIfFailingLongerThan(d.clientId(), props.pauseAfterFailing())) {
                paused(d.clientId(), "failing without a success for longer than " + props.pauseAfterFailing());
            }
        } catch (org.springframework.dao.DataAccessException e) {
            log.warn("Client {} could not be paused now: {}", d.clientId(), e.toString());
        }
    }

    /** Just paused by itself: logged, counted and alerted, once. */
    private void paused(java.util.UUID client, String reason) {
        pausedClients.increment();
        log.warn("Client {} is paused: {}. Its notifications wait, collapsed, until it is resumed.", client, reason);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "lockwatch.client_paused");
        body.put("client_id", client.toString());
        body.put("reason", reason);
        alert(body);
    }

    private Map<String, Object> deadAlert(Delivery d, String error) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "lockwatch.notification_dead");
        body.put("notification_id", d.id().toString());
        body.put("client_id", d.clientId().toString());
        body.put("sensor_id", d.sensorId());
        body.put("event_type", d.type());
        body.put("attempts", d.attempt());
        body.put("last_error", error);
        return body;
    }

    /** An operator alert, POSTed to {@code alert-url} if one is set; never holds up delivery. */
    private void alert(Map<String, Object> body) {
        if (props.alertUrl() == null || props.alertUrl().isBlank()) {
            return;
        }
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(props.alertUrl())).timeout(props.timeout())
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build();
            alertClient.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
                if (e != null || r.statusCode() >= 300) {
                    log.warn("Operator alert {} not accepted: {}", body.get("type"),
                            e != null ? e.toString() : "HTTP " + r.statusCode());
                }
            });
        } catch (Exception e) {
            log.warn("Operator alert {} not sent: {}", body.get("type"), e.toString());
        }
    }

    /** The v1 webhook body. */
    static Map<String, Object> payload(Delivery d) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("id", d.id().toString());
        p.put("type", d.type());
        p.put("sensor_id", d.sensorId());
        p.put("address", d.address());
        p.put("state", d.state());
        p.put("previous_state", d.previousState());
        p.put("sequence", d.sequence());
        p.put("occurred_at", RFC3339_MILLIS.format(Instant.ofEpochMilli(d.occurredAt())));
        p.put("client_id", d.clientId().toString());
        if (d.alarm() != null) {
            p.put("alarm", d.alarm());
        }
        if (d.replayed()) {
            // it comes after the sensor's newer events: not the door's state now
            p.put("replayed", true);
        }
        if (d.maintenance()) {
            p.put("maintenance", true);
        }
        return p;
    }
}
