package io.lockwatch.infra.amqp;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.context.ApplicationContext;

/**
 * A queue of the service exists on the broker with another type or other arguments than the service declares it
 * with. RabbitMQ never changes a queue's type in place: redeclared, the queue would be refused again at every
 * reconnection. So the start is refused, saying which queue and how to move on.
 */
public class QueueMismatchException extends RuntimeException {

    // RabbitMQ's PRECONDITION_FAILED: "inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received ..."
    private static final Pattern INEQUIVALENT =
            Pattern.compile("inequivalent arg '([^']+)' for queue '([^']+)' in vhost '([^']*)': (.*?)(?:, class-id=.*)?$");

    private final boolean typeChange;

    QueueMismatchException(String message, boolean typeChange) {
        super(message);
        this.typeChange = typeChange;
    }

    /** Whether the queue is of another type than the one configured (a migration's case). */
    public boolean typeChange() {
        return typeChange;
    }

    /**
     * Declares every queue, exchange and binding of the context, once: with an admin of its own, without the retries
     * of the service's (they are for a broker that flaps, not for a refusal that will not change) and without its
     * listener on new connections. A queue the broker holds otherwise refuses the start.
     */
    static void declareOrRefuse(ConnectionFactory rabbit, ApplicationContext context, QueueTypes types) {
        RabbitAdmin once = new RabbitAdmin(rabbit);
        once.setApplicationContext(context);
        try {
            once.initialize();
        } catch (AmqpException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                Matcher m = t.getMessage() == null ? null : INEQUIVALENT.matcher(t.getMessage());
                if (m != null && m.find()) {
                    boolean type = m.group(1).equals("x-queue-type");
                    throw new QueueMismatchException("queue " + m.group(2) + " (virtual host " + m.group(3) + ") exists "
                            + "on the broker with another " + (type ? "type" : "argument " + m.group(1)) + " than "
                            + "lockwatch.amqp.queue-type=" + types.type().name().toLowerCase() + " declares: "
                            + m.group(4), type);
                }
            }
            // anything else (a broker away) is for the consumers to ride out, as at any reconnection
        }
    }
}
