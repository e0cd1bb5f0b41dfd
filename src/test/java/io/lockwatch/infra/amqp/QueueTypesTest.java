package io.lockwatch.infra.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Queue;
import org.springframework.mock.env.MockEnvironment;

/** The queue type each profile gets by default, what may be chosen, and what each type declares. */
class QueueTypesTest {

    @Test
    void quorumOnRabbitMqAndClassicOnTheEmbeddedBrokerByDefault() {
        assertThat(types(null, "external").type()).isEqualTo(QueueTypes.Type.QUORUM);
        assertThat(types(null, "embedded").type()).isEqualTo(QueueTypes.Type.CLASSIC);
        assertThat(types(QueueTypes.Type.CLASSIC, "external").type()).isEqualTo(QueueTypes.Type.CLASSIC);
    }

    @Test
    void theEmbeddedBrokerRefusesQuorumWithOneLine() {
        assertThatThrownBy(() -> types(QueueTypes.Type.QUORUM, "embedded"))
                .isInstanceOfSatisfying(QueueMismatchException.class, e -> {
                    assertThat(e.getMessage()).isEqualTo("lockwatch.amqp.queue-type=quorum needs RabbitMQ; the embedded "
                            + "broker takes classic queues only");
                    assertThat(new QueueMismatchFailureAnalyzer().analyze(e).getAction()).contains("classic");
                });
    }

    @Test
    void aQuorumQueueSaysSoAndAClassicOneCarriesNoTypeAtAll() {
        Queue quorum = new QueueTypes(QueueTypes.Type.QUORUM).singleActiveConsumer("q");
        assertThat(quorum.getArguments()).containsEntry("x-queue-type", "quorum").containsEntry("x-single-active-consumer", true);
        assertThat(quorum.isDurable()).isTrue();
        // as declared before there was a choice: the same queue for a deployment that keeps classic ones
        Queue classic = new QueueTypes(QueueTypes.Type.CLASSIC).durable("q");
        assertThat(classic.getArguments()).isEmpty();
        assertThat(classic.isDurable() && !classic.isExclusive() && !classic.isAutoDelete()).isTrue();
    }

    private static QueueTypes types(QueueTypes.Type configured, String profile) {
        MockEnvironment env = new MockEnvironment();
        env.setActiveProfiles(profile);
        return new AmqpConfiguration().queueTypes(new AmqpProperties(configured), env);
    }
}
