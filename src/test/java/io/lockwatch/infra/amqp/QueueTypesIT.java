package io.lockwatch.infra.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.support.GenericApplicationContext;

/**
 * Against RabbitMQ ({@code scripts/services.sh up}): a queue the broker already holds under the other type is never
 * redeclared silently; the start is refused with one line naming it, and how to move on. Each test's queue is its
 * own, deleted afterwards.
 */
class QueueTypesIT {

    private final CachingConnectionFactory rabbit = new CachingConnectionFactory("127.0.0.1", 5672);
    private final String name = "lockwatch.it.queue-type." + UUID.randomUUID();

    @AfterEach
    void tidy() {
        new RabbitAdmin(rabbit).deleteQueue(name);
        rabbit.destroy();
    }

    @Test
    void aClassicQueueIsNotRedeclaredAsQuorum() {
        declareAlone(new QueueTypes(QueueTypes.Type.CLASSIC).durable(name));

        assertThatThrownBy(() -> declareAlone(new QueueTypes(QueueTypes.Type.QUORUM).durable(name)))
                .isInstanceOfSatisfying(QueueMismatchException.class, e -> {
                    assertThat(e.typeChange()).isTrue();
                    assertThat(e.getMessage()).startsWith("queue " + name + " (virtual host /) exists on the broker with another type")
                            .contains("lockwatch.amqp.queue-type=quorum").doesNotContain("\n");
                    FailureAnalysis analysis = new QueueMismatchFailureAnalyzer().analyze(e);
                    assertThat(analysis.getAction()).contains("shovel").contains("docs/scaling.md");
                });
    }

    @Test
    void aQuorumQueueIsNotRedeclaredAsClassic() {
        declareAlone(new QueueTypes(QueueTypes.Type.QUORUM).singleActiveConsumer(name));

        assertThatThrownBy(() -> declareAlone(new QueueTypes(QueueTypes.Type.CLASSIC).singleActiveConsumer(name)))
                .isInstanceOfSatisfying(QueueMismatchException.class, e -> assertThat(e.getMessage())
                        .contains(name).contains("lockwatch.amqp.queue-type=classic"));
    }

    @Test
    void aQueueOfTheConfiguredTypeIsDeclaredAgainQuietly() {
        declareAlone(new QueueTypes(QueueTypes.Type.QUORUM).singleActiveConsumer(name));
        declareAlone(new QueueTypes(QueueTypes.Type.QUORUM).singleActiveConsumer(name));

        assertThat(new RabbitAdmin(rabbit).getQueueInfo(name)).isNotNull();
    }

    /** What the service's start does with its queues, for this one queue alone. */
    private void declareAlone(Queue queue) {
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean("queue", Queue.class, () -> queue);
            context.refresh();
            QueueTypes types = new QueueTypes("quorum".equals(queue.getArguments().get("x-queue-type"))
                    ? QueueTypes.Type.QUORUM : QueueTypes.Type.CLASSIC);
            QueueMismatchException.declareOrRefuse(rabbit, context, types);
        }
    }
}
