package io.lockwatch.model;

import java.time.Duration;
import java.util.List;

import io.lockwatch.model.World.Kind;
import io.lockwatch.model.World.Planned;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import net.jqwik.spring.JqwikSpringSupport;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A model-based test of the whole API (jqwik's stateful testing), on the embedded default with its real broker and
 * database: random sequences of operations, each done on the service and on a reference {@link Model}, and after
 * every step what the API answers and what every client's webhook receiver heard compared with the model.
 *
 * <p>The operations: sensors registered, deleted and registered again under the same id; clients created and
 * deleted; links made and removed; readings posted (in arrays of one to three) in order, at the same measured time
 * as the last, stale, dated in the future, and duplicated (a reading sent before re-sent as it was); clients paused
 * and resumed (by the operator or their own admin key); client keys made, expired, revoked, a client-admin key
 * trying to lift the operator's expiry and to revoke another client's key; a client's filters ({@code event_types},
 * {@code alarm_severities}) set; a door left open too long (its threshold lowered until the scan raises its alarm),
 * closed again (the scan clears it) or deleted with its alarm active; alarms acknowledged (by the operator, by a
 * linked client's admin key, by another client's: 404, and again: 409); escalation chains set, the sensor's by the
 * operator and a link's own by the operator or the client's key (naming another client: 400; replacing the
 * operator's: 403), with steps due within a step or in an hour; maintenance windows opened over some sensors and
 * ended early; people of the organisation signing in to the console at the identity provider (over HTTP, as a browser
 * does), pausing and resuming clients as operators, and signed out by an operator from the list of who is signed in.
 *
 * <p>After each step: every sensor's state and sequence (404 once deleted); every client, its links with their
 * state, its keys' states; every key's answers (itself, its client, 404 for every other client, its feed and every
 * sensor not linked to it, 401 once revoked, expired or its client deleted); and what each receiver heard: every
 * change of its linked sensors its filters take, once, each sensor's in sequence order, signed, nothing of another's;
 * while paused, only the newest of each sensor and kind, after resuming; alarms raised and cleared to the linked
 * clients that take them, the clearing also to those told of the raising or sent a step; each escalation step to its
 * client alone, numbered as the scan numbers it; state changes inside a window marked {@code maintenance}, an alarm
 * raised inside one sent at its end if still active, never if it cleared first. Every alarm as the operator reads it
 * (active, acknowledged, each step pending, sent or stopped: an acknowledgement or a clearing stops the rest) and as
 * a linked client's key does (only the steps sent to its own client); each chain as the operator and the keys read
 * it; and each live client's pull feed, with the operator's token and its keys: every notification it was given
 * (those a pause superseded or an unlinking cancelled too), each sensor's in sequence order, every webhook it heard
 * there under the same id. Who is signed in, as the operator's list shows it, and each person's token: taken while
 * signed in, refused once signed out. And the audit log: every change the run asked for, once, with who asked (the operator's
 * token, a key, or {@code anonymous} for a key refused as no credential) and the answer's status, and nothing else.
 * Only what the service documents as asynchronous is waited for (on conditions): readings
 * being applied, the alarm and maintenance scans, webhooks arriving, the feed catching up. A failure is shrunk by
 * jqwik to the shortest sequence that still fails, and reported with it; after a run the test prints how often each
 * operation met a state it applies to.
 *
 * <p>{@code mvn verify} runs a bounded run: {@code lockwatch.model.tries} (default 6, set in pom.xml as jqwik's
 * {@code jqwik.tries.default}) sequences of up to {@code lockwatch.model.steps} (default 14) operations. A longer
 * run, for example: {@code mvn test -Dtest=ApiModelTest -Dlockwatch.model.tries=200 -Dlockwatch.model.steps=60}.
 * jqwik prints each run's seed; a failed run's sample is tried first by the next run (target/jqwik-database).
 */
@JqwikSpringSupport
// the tests' scans run every half second (src/test/resources/config/application.yaml): a door left open, a closing,
// an escalation step and a window's release are waited for within a step
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ApiModelTest {

    static final int STEPS = Integer.getInteger("lockwatch.model.steps", 14);

    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @LocalServerPort int port;

    @AfterContainer
    static void closeReceiver() {
        receiver.close();
        // which operations met a state they apply to, and how often
        System.out.println("ApiModelTest reached: " + World.REACHED);
    }

    @Property
    void theApiAndEveryReceiverAgreeWithTheModel(@ForAll("operations") ActionChain<World> chain) {
        chain.withInvariant("the service agrees with the model", World::check).run();
    }

    @Provide
    Arbitrary<ActionChain<World>> operations() {
        // the port is read as each run starts: Spring injects it after the arbitraries are made
        return ActionChain.<World>startWith(() -> new World(new Api(port, Duration.ofSeconds(60)), receiver))
                .withAction(3, registerSensor())
                .withAction(1, deleteSensor())
                .withAction(2, createClient())
                .withAction(1, deleteClient())
                .withAction(3, link())
                .withAction(1, unlink())
                .withAction(5, readings())
                .withAction(1, pause())
                .withAction(1, resume())
                .withAction(2, createKey())
                .withAction(1, revokeKey())
                .withAction(1, expireKey())
                .withAction(1, liftExpiry())
                .withAction(1, revokeAcross())
                .withAction(3, doorLeftOpen())
                .withAction(2, acknowledge())
                .withAction(2, sensorChain())
                .withAction(2, linkChain())
                .withAction(1, filters())
                .withAction(1, maintenance())
                .withAction(1, endMaintenance())
                .withAction(2, signIn())
                .withAction(2, personEnables())
                .withAction(1, endSession())
                .withMaxTransformations(STEPS);
    }

    // --- the operations
    //
    // Each operation's values (slots, key places, roles) are drawn alike whatever the state, and an operation that
    // does not apply to the state it meets (deleting a client slot that is empty) changes nothing: so a sequence
    // with steps taken out, as jqwik shrinks it, still means the same for the steps left, and shrinks far.

    private static Action.Independent<World> action(Arbitrary<Transformer<World>> transformer) {
        return () -> transformer;
    }

    private static final Arbitrary<Integer> SENSOR = Arbitraries.integers().between(0, Model.SENSORS - 1);
    private static final Arbitrary<Integer> CLIENT = Arbitraries.integers().between(0, Model.CLIENTS - 1);
    private static final Arbitrary<Integer> KEY = Arbitraries.integers().between(0, 3);
    private static final Arbitrary<Boolean> AS_CLIENT = Arbitraries.of(false, true);

    private static String by(boolean asClient) {
        return asClient ? " by its admin key" : "";
    }

    private static Action.Independent<World> registerSensor() {
        return action(SENSOR.map(s -> Transformer.mutate("register s" + s, x -> x.registerSensor(s))));
    }

    private static Action.Independent<World> deleteSensor() {
        return action(SENSOR.map(s -> Transformer.mutate("delete s" + s, x -> x.deleteSensor(s))));
    }

    private static Action.Independent<World> createClient() {
        return action(CLIENT.map(c -> Transformer.mutate("create c" + c, x -> x.createClient(c))));
    }

    private static Action.Independent<World> deleteClient() {
        return action(CLIENT.map(c -> Transformer.mutate("delete c" + c, x -> x.deleteClient(c))));
    }

    private static Action.Independent<World> link() {
        return action(Combinators.combine(CLIENT, SENSOR)
                .as((c, s) -> Transformer.<World>mutate("link c" + c + " to s" + s, x -> x.link(c, s))));
    }

    private static Action.Independent<World> unlink() {
        return action(Combinators.combine(CLIENT, SENSOR)
                .as((c, s) -> Transformer.<World>mutate("unlink c" + c + " from s" + s, x -> x.unlink(c, s))));
    }

    private static Action.Independent<World> readings() {
        Arbitrary<Planned> one = Combinators.combine(
                SENSOR,
                Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(5, Arbitraries.just(Kind.IN_ORDER)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.SAME_TIME)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.STALE)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.FUTURE)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.DUPLICATE))),
                Arbitraries.integers().between(0, 1),
                Arbitraries.integers().between(0, Model.RECENT_IDS - 1)).as(Planned::new);
        return action(one.list().ofMinSize(1).ofMaxSize(3).map(rs -> Transformer.mutate("readings " + rs, x -> x.readings(rs))));
    }

    private static Action.Independent<World> pause() {
        return action(Combinators.combine(CLIENT, AS_CLIENT)
                .as((c, k) -> Transformer.<World>mutate("pause c" + c + by(k), x -> x.enable(c, false, k))));
    }

    private static Action.Independent<World> resume() {
        return action(Combinators.combine(CLIENT, AS_CLIENT)
                .as((c, k) -> Transformer.<World>mutate("resume c" + c + by(k), x -> x.enable(c, true, k))));
    }

    private static Action.Independent<World> createKey() {
        return action(Combinators.combine(CLIENT, Arbitraries.of("client-read", "client-admin"), AS_CLIENT)
                .as((c, role, k) -> Transformer.<World>mutate("make a " + role + " key for c" + c + by(k),
                        x -> x.createKey(c, role, k))));
    }

    private static Action.Independent<World> revokeKey() {
        return action(Combinators.combine(CLIENT, KEY, AS_CLIENT).as((c, i, k) -> Transformer.<World>mutate(
                "revoke c" + c + "'s key #" + i + by(k), x -> x.revokeKey(c, i, k))));
    }

    private static Action.Independent<World> expireKey() {
        return action(Combinators.combine(CLIENT, KEY)
                .as((c, i) -> Transformer.<World>mutate("expire c" + c + "'s key #" + i, x -> x.expireKey(c, i))));
    }

    private static Action.Independent<World> liftExpiry() {
        return action(Combinators.combine(CLIENT, KEY).as((c, i) -> Transformer.<World>mutate(
                "c" + c + "'s admin key sets no expiry on its expired key #" + i, x -> x.liftExpiry(c, i))));
    }

    private static Action.Independent<World> revokeAcross() {
        return action(Combinators.combine(CLIENT, KEY, CLIENT, KEY).as((c, i, o, j) -> Transformer.<World>mutate(
                "c" + c + "'s key #" + i + " revokes c" + o + "'s key #" + j, x -> x.revokeAcross(c, i, o, j))));
    }

    private static Action.Independent<World> doorLeftOpen() {
        return action(SENSOR.map(s -> Transformer.mutate("s" + s + " left open too long", x -> x.doorLeftOpen(s))));
    }

    private static Action.Independent<World> acknowledge() {
        return action(Combinators.combine(SENSOR, CLIENT, AS_CLIENT).as((s, c, k) -> Transformer.<World>mutate(
                "acknowledge the alarm of s" + s + (k ? " by c" + c + "'s admin key" : ""), x -> x.acknowledge(s, c, k))));
    }

    private static final Arbitrary<List<World.PlannedStep>> CHAIN = Combinators.combine(CLIENT, Arbitraries.of(true, false))
            .as(World.PlannedStep::new).list().ofMinSize(1).ofMaxSize(2);

    private static Action.Independent<World> sensorChain() {
        return action(Combinators.combine(SENSOR, CHAIN).as((s, steps) -> Transformer.<World>mutate(
                "the chain of s" + s + ": " + steps, x -> x.sensorChain(s, steps))));
    }

    private static Action.Independent<World> linkChain() {
        return action(Combinators.combine(CLIENT, SENSOR, CHAIN, AS_CLIENT).as((c, s, steps, k) -> Transformer.<World>mutate(
                "c" + c + "'s own chain for s" + s + ": " + steps + by(k), x -> x.linkChain(c, s, steps, k))));
    }

    private static Action.Independent<World> filters() {
        return action(Combinators.combine(CLIENT, Arbitraries.integers().between(0, World.EVENT_TYPES.size() - 1),
                Arbitraries.integers().between(0, World.SEVERITIES.size() - 1), AS_CLIENT).as((c, t, v, k) ->
                Transformer.<World>mutate("c" + c + " takes " + (World.EVENT_TYPES.get(t).isEmpty() ? "every type" : World.EVENT_TYPES.get(t))
                        + " of " + (World.SEVERITIES.get(v).isEmpty() ? "every severity" : World.SEVERITIES.get(v)) + by(k),
                        x -> x.filters(c, t, v, k))));
    }

    private static Action.Independent<World> maintenance() {
        return action(SENSOR.list().ofMinSize(1).ofMaxSize(2).map(ss -> Transformer.mutate(
                "a maintenance window over s" + ss, x -> x.maintenance(ss))));
    }

    private static final Arbitrary<Integer> PERSON = Arbitraries.integers().between(0, World.PEOPLE - 1);

    private static Action.Independent<World> signIn() {
        return action(PERSON.map(p -> Transformer.mutate("person p" + p + " signs in", x -> x.signIn(p))));
    }

    private static Action.Independent<World> personEnables() {
        return action(Combinators.combine(PERSON, CLIENT, Arbitraries.of(false, true)).as((p, c, e) -> Transformer.<World>mutate(
                "person p" + p + (e ? " resumes" : " pauses") + " c" + c, x -> x.personEnables(p, c, e))));
    }

    private static Action.Independent<World> endSession() {
        return action(PERSON.map(p -> Transformer.mutate("an operator signs person p" + p + " out", x -> x.endSession(p))));
    }

    private static Action.Independent<World> endMaintenance() {
        return action(Arbitraries.just(Transformer.mutate("the maintenance window ended", World::endMaintenance)));
    }
}
