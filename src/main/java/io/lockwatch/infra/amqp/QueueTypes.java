package io.lockwatch.infra.amqp;

import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;

/**
 * The type of every queue the service declares ({@code lockwatch.amqp.queue-type}): quorum queues, replicated by
 * Raft over the cluster's nodes, on RabbitMQ; classic queues, which live on one node, on the embedded broker (which
 * refuses the argument) or by choice. A classic queue is declared with no type argument at all, as before there was
 * a choice, so that the queues of a deployment that kept classic ones are the same queues.
 */
public final class QueueTypes {

    /** The values of {@code lockwatch.amqp.queue-type}. */
    public enum Type {
        QUORUM, CLASSIC
    }

    private final Type type;

    public QueueTypes(Type type) {
        this.type = type;
    }

    public Type type() {
        return type;
    }

    /** A durable queue of the configured type. */
    public Queue durable(String name) {
        return builder(name).build();
    }

    /**
     * A durable queue of the configured type whose messages one consumer at a time takes, in order, the others
     * waiting to take over (RabbitMQ's single active consumer, which quorum queues keep).
     */
    public Queue singleActiveConsumer(String name) {
        return builder(name).singleActiveConsumer().build();
    }

    private QueueBuilder builder(String name) {
        QueueBuilder b = QueueBuilder.durable(name);
        return type == Type.QUORUM ? b.quorum() : b;
    }
}
