package io.lockwatch.adapters;

import io.lockwatch.testing.NetworkBroker;
import org.junit.jupiter.api.AfterAll;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Zigbee2MQTT adapter on the embedded default, against a Moquette of the test's own, anonymous, which is away
 * while the service starts (as after a site's power cut): the service starts all the same, and the adapter connects
 * once the broker is there.
 */
// a context of its own, closed after the class: its adapter would otherwise go on knocking at the stopped broker
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class NetworkAdaptersTest extends NetworkAdaptersContract {

    static final NetworkBroker broker = NetworkBroker.onAFreePort();

    @DynamicPropertySource
    static void brokerUrl(DynamicPropertyRegistry registry) {
        registry.add("lockwatch.adapters.zigbee2mqtt.broker-url", broker::url);
        registry.add("lockwatch.adapters.chirpstack.broker-url", broker::url);
        registry.add("lockwatch.adapters.the-things-stack.broker-url", broker::url);
        registry.add("lockwatch.adapters.shelly.broker-url", broker::url);
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @Override
    NetworkBroker broker() {
        return broker;
    }

    @org.springframework.beans.factory.annotation.Autowired javax.sql.DataSource dataSource;

    /** The sessions holding the test's advisory lock (its key's low 32 bits are the lock's objid). */
    private long locksHeld() {
        return jdbc.queryForObject("""
                SELECT count(*) FROM pg_locks
                 WHERE locktype = 'advisory' AND granted
                   AND objid = (hashtext('lockwatch.adapters.leadership-test')::bigint & 4294967295)::oid""", Long.class);
    }

    @org.junit.jupiter.api.Test
    void oneInstanceLeadsAtATimeAndAnotherTakesOverWhenItLetsGo() {
        try (OneInstance first = new OneInstance(dataSource, "leadership-test");
             OneInstance second = new OneInstance(dataSource, "leadership-test")) {
            org.assertj.core.api.Assertions.assertThat(first.leads()).isTrue();
            org.assertj.core.api.Assertions.assertThat(second.leads()).as("while the first holds it").isFalse();
            org.assertj.core.api.Assertions.assertThat(first.leads()).as("asked again").isTrue();
            org.assertj.core.api.Assertions.assertThat(locksHeld()).isEqualTo(1);
            first.close(); // as its instance stops, or its database connection breaks
            // given up for real: its connection evicted, not handed back to the pool with the lock in its session
            org.assertj.core.api.Assertions.assertThat(locksHeld()).isZero();
            org.assertj.core.api.Assertions.assertThat(second.leads()).isTrue();
            org.assertj.core.api.Assertions.assertThat(first.leads()).isFalse();
        }
    }
}
