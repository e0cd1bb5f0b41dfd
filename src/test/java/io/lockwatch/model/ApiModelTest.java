package io.lockwatch.model;

import java.time.Duration;

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
 * trying to lift the operator's expiry and to revoke another client's key. After each step: every sensor's state and
 * sequence (404 once deleted); every client, its links with their state, its keys' states; every key's answers
 * (itself, its client, 404 for every other client and every sensor not linked to it, 401 once revoked, expired or
 * its client deleted); and what each receiver heard: every change of its linked sensors, once, each sensor's in
 * sequence order, signed, nothing of another's; while paused, only the newest of each sensor, after resuming.
 * Only what the service documents as asynchronous is waited for (on conditions): readings being applied, webhooks
 * arriving. A failure is shrunk by jqwik to the shortest sequence that still fails, and reported with it.
 *
 * <p>{@code mvn verify} runs a bounded run: {@code lockwatch.model.tries} (default 6, set in pom.xml as jqwik's
 * {@code jqwik.tries.default}) sequences of up to {@code lockwatch.model.steps} (default 14) operations. A longer
 * run, for example: {@code mvn test -Dtest=ApiModelTest -Dlockwatch.model.tries=200 -Dlockwatch.model.steps=60}.
 * jqwik prints each run's seed; a failed run's sample is tried first by the next run (target/jqwik-database).
 */
@JqwikSpringSupport
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ApiModelTest {

    static final int STEPS = Integer.getInteger("lockwatch.model.steps", 14);

    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @LocalServerPort int port;

    @AfterContainer
    static void closeReceiver() {
        receiver.close();
    }

    @Property
    void theApiAndEveryReceiverAgreeWithTheModel(@ForAll("operations") ActionChain<World> chain) {
        chain.withInvariant("the service agrees with the model", World::check).run();
    }

    @Provide
    Arbitrary<ActionChain<World>> operations() {
        // the port is read as each run starts: Spring injects it after the arbitraries are made
        return ActionChain.<World>startWith(() -> new World(new Api(port, Duration.ofSeconds(60)), receiver))
                .withAction(2, registerSensor())
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
}
