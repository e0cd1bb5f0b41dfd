package io.lockwatch.bench;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

/** Administration of RabbitMQ over one connection of its own: queue depth, consumers, purge, delete. */
final class Broker implements AutoCloseable {

    private final Connection connection;

    Broker(ConnectionFactory factory) throws IOException, TimeoutException {
        this.connection = factory.newConnection("lockwatch-bench-admin");
    }

    static ConnectionFactory factory(String uri) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(uri);
        // the RabbitMQ restart drill: connections and channels (confirm mode included) come back by themselves
        factory.setAutomaticRecoveryEnabled(true);
        factory.setNetworkRecoveryInterval(1000);
        factory.setRequestedHeartbeat(30);
        return factory;
    }

    /** The queue's state, or null if it does not exist. */
    AMQP.Queue.DeclareOk inspect(String queue) throws IOException {
        // a passive declare of a missing queue closes its channel, so every look uses a channel of its own
        Channel channel = connection.createChannel();
        try {
            return channel.queueDeclarePassive(queue);
        } catch (IOException e) {
            return null;
        } finally {
            closeQuietly(channel);
        }
    }

    /** Messages ready in the queue (not counting those delivered and not yet acknowledged); -1 if it is missing. */
    long depth(String queue) throws IOException {
        AMQP.Queue.DeclareOk ok = inspect(queue);
        return ok == null ? -1 : ok.getMessageCount();
    }

    void purge(String queue) throws IOException {
        try (Channel channel = connection.createChannel()) {
            channel.queuePurge(queue);
        } catch (TimeoutException e) {
            throw new IOException(e);
        }
    }

    /**
     * Declares a durable topic exchange and a durable queue bound to it with {@code #}, like the service's, of the
     * service's queue type ({@code quorum} or {@code classic}).
     */
    void declareTopology(String exchange, String queue, String queueType) throws IOException {
        try (Channel channel = connection.createChannel()) {
            channel.exchangeDeclare(exchange, "topic", true);
            channel.queueDeclare(queue, true, false, false,
                    "quorum".equals(queueType) ? java.util.Map.of("x-queue-type", "quorum") : null);
            channel.queueBind(queue, exchange, "#");
        } catch (TimeoutException e) {
            throw new IOException(e);
        }
    }

    void deleteTopology(String exchange, String queue) throws IOException {
        try (Channel channel = connection.createChannel()) {
            channel.queueDelete(queue);
            channel.exchangeDelete(exchange);
        } catch (TimeoutException e) {
            throw new IOException(e);
        }
    }

    private static void closeQuietly(Channel channel) {
        try {
            if (channel.isOpen()) {
                channel.close();
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            // closed by the broker already
        }
    }

    @Override
    public void close() {
        try {
            connection.close(5000);
        } catch (IOException | RuntimeException e) {
            // already closed
        }
    }
}
