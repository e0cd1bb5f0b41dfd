package io.lockwatch.model;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lockwatch.model.Model.Client;
import io.lockwatch.model.Model.Key;
import io.lockwatch.model.Model.KeyState;
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

    private static Action.Dependent<World> action(Predicate<World> precondition,
                                                  Function<World, Arbitrary<Transformer<World>>> transformer) {
        return new Action.Dependent<>() {
            @Override
            public boolean precondition(World w) {
                return precondition.test(w);
            }

            @Override
            public Arbitrary<Transformer<World>> transformer(World w) {
                return transformer.apply(w);
            }
        };
    }

    private static List<Integer> sensors(World w, boolean registered) {
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < Model.SENSORS; i++) {
            if (w.model.sensors[i].registered == registered) {
                slots.add(i);
            }
        }
        return slots;
    }

    private static List<Integer> clients(World w, Predicate<Client> which) {
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < Model.CLIENTS; i++) {
            if (w.model.clients[i] != null && which.test(w.model.clients[i])) {
                slots.add(i);
            }
        }
        return slots;
    }

    private static List<Integer> freeClientSlots(World w) {
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < Model.CLIENTS; i++) {
            if (w.model.clients[i] == null) {
                slots.add(i);
            }
        }
        return slots;
    }

    /** Pairs {client slot, sensor slot} of live clients and registered sensors, linked or not. */
    private static List<int[]> pairs(World w, boolean linked) {
        List<int[]> pairs = new ArrayList<>();
        for (int c : clients(w, x -> true)) {
            for (int s : sensors(w, true)) {
                if (w.model.clients[c].links.contains(s) == linked) {
                    pairs.add(new int[] {c, s});
                }
            }
        }
        return pairs;
    }

    /** Pairs {client slot, key index} of live clients' keys in one of these states. */
    private static List<int[]> keys(World w, Predicate<Key> which) {
        List<int[]> keys = new ArrayList<>();
        for (int c : clients(w, x -> true)) {
            List<Key> ks = w.model.clients[c].keys;
            for (int k = 0; k < ks.size(); k++) {
                if (which.test(ks.get(k))) {
                    keys.add(new int[] {c, k});
                }
            }
        }
        return keys;
    }

    private static boolean hasActiveAdmin(Client c) {
        return c != null && c.keys.stream().anyMatch(k -> k.admin() && k.state == KeyState.ACTIVE);
    }

    /** Done by the operator, or by the client's own active admin key (its first) where it has one. */
    private static Arbitrary<Boolean> asClient(World w, int slot) {
        return hasActiveAdmin(w.model.clients[slot]) ? Arbitraries.of(false, true) : Arbitraries.just(false);
    }

    private static String by(boolean asClient) {
        return asClient ? " by its admin key" : "";
    }

    private static Action.Dependent<World> registerSensor() {
        return action(w -> !sensors(w, false).isEmpty(), w -> Arbitraries.of(sensors(w, false))
                .map(s -> Transformer.mutate("register s" + s, x -> x.registerSensor(s))));
    }

    private static Action.Dependent<World> deleteSensor() {
        return action(w -> !sensors(w, true).isEmpty(), w -> Arbitraries.of(sensors(w, true))
                .map(s -> Transformer.mutate("delete s" + s, x -> x.deleteSensor(s))));
    }

    private static Action.Dependent<World> createClient() {
        return action(w -> !freeClientSlots(w).isEmpty(), w -> Arbitraries.of(freeClientSlots(w))
                .map(c -> Transformer.mutate("create c" + c, x -> x.createClient(c))));
    }

    private static Action.Dependent<World> deleteClient() {
        return action(w -> !clients(w, c -> true).isEmpty(), w -> Arbitraries.of(clients(w, c -> true))
                .map(c -> Transformer.mutate("delete c" + c, x -> x.deleteClient(c))));
    }

    private static Action.Dependent<World> link() {
        return action(w -> !pairs(w, false).isEmpty(), w -> Arbitraries.of(pairs(w, false))
                .map(p -> Transformer.mutate("link c" + p[0] + " to s" + p[1], x -> x.link(p[0], p[1]))));
    }

    private static Action.Dependent<World> unlink() {
        return action(w -> !pairs(w, true).isEmpty(), w -> Arbitraries.of(pairs(w, true))
                .map(p -> Transformer.mutate("unlink c" + p[0] + " from s" + p[1], x -> x.unlink(p[0], p[1]))));
    }

    private static Action.Dependent<World> readings() {
        Arbitrary<Planned> one = Combinators.combine(
                Arbitraries.integers().between(0, Model.SENSORS - 1),
                Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(5, Arbitraries.just(Kind.IN_ORDER)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.SAME_TIME)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.STALE)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.FUTURE)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.DUPLICATE))),
                Arbitraries.integers().between(0, 1),
                Arbitraries.integers().between(0, Model.RECENT_IDS - 1)).as(Planned::new);
        return action(w -> true, w -> one.list().ofMinSize(1).ofMaxSize(3)
                .map(rs -> Transformer.mutate("readings " + rs, x -> x.readings(rs))));
    }

    private static Action.Dependent<World> pause() {
        return action(w -> !clients(w, c -> c.enabled).isEmpty(), w -> Arbitraries.of(clients(w, c -> c.enabled))
                .flatMap(c -> asClient(w, c).map(k -> Transformer.mutate("pause c" + c + by(k), x -> x.enable(c, false, k)))));
    }

    private static Action.Dependent<World> resume() {
        return action(w -> !clients(w, c -> !c.enabled).isEmpty(), w -> Arbitraries.of(clients(w, c -> !c.enabled))
                .flatMap(c -> asClient(w, c).map(k -> Transformer.mutate("resume c" + c + by(k), x -> x.enable(c, true, k)))));
    }

    private static Action.Dependent<World> createKey() {
        Predicate<Client> room = c -> c.liveKeys() < 3;
        return action(w -> !clients(w, room).isEmpty(), w -> Arbitraries.of(clients(w, room))
                .flatMap(c -> Combinators.combine(Arbitraries.of("client-read", "client-admin"), asClient(w, c))
                        .as((role, k) -> Transformer.<World>mutate("make a " + role + " key for c" + c + by(k),
                                x -> x.createKey(c, role, k)))));
    }

    private static Action.Dependent<World> revokeKey() {
        Predicate<Key> revocable = k -> k.state != KeyState.REVOKED;
        return action(w -> !keys(w, revocable).isEmpty(), w -> Arbitraries.of(keys(w, revocable))
                .flatMap(p -> asClient(w, p[0]).map(k -> Transformer.<World>mutate(
                        "revoke c" + p[0] + "'s key #" + p[1] + by(k), x -> x.revokeKey(p[0], p[1], k)))));
    }

    private static Action.Dependent<World> expireKey() {
        Predicate<Key> active = k -> k.state == KeyState.ACTIVE;
        return action(w -> !keys(w, active).isEmpty(), w -> Arbitraries.of(keys(w, active))
                .map(p -> Transformer.mutate("expire c" + p[0] + "'s key #" + p[1], x -> x.expireKey(p[0], p[1]))));
    }

    private static Action.Dependent<World> liftExpiry() {
        Function<World, List<int[]>> targets = w -> keys(w, k -> k.state == KeyState.EXPIRED).stream()
                .filter(p -> hasActiveAdmin(w.model.clients[p[0]])).toList();
        return action(w -> !targets.apply(w).isEmpty(), w -> Arbitraries.of(targets.apply(w))
                .map(p -> Transformer.mutate("c" + p[0] + "'s admin key sets no expiry on its expired key #" + p[1],
                        x -> x.liftExpiry(p[0], p[1]))));
    }

    private static Action.Dependent<World> revokeAcross() {
        Function<World, List<int[][]>> pairs = w -> {
            List<int[][]> found = new ArrayList<>();
            for (int[] mine : keys(w, k -> k.state == KeyState.ACTIVE)) {
                for (int[] theirs : keys(w, k -> true)) {
                    if (mine[0] != theirs[0]) {
                        found.add(new int[][] {mine, theirs});
                    }
                }
            }
            return found;
        };
        return action(w -> !pairs.apply(w).isEmpty(), w -> Arbitraries.of(pairs.apply(w)).map(p -> Transformer.mutate(
                "c" + p[0][0] + "'s key #" + p[0][1] + " revokes c" + p[1][0] + "'s key #" + p[1][1],
                x -> x.revokeAcross(p[0][0], p[0][1], p[1][0], p[1][1]))));
    }
}
