package io.lockwatch.infra.errors;

import java.sql.SQLTransientException;
import java.util.List;

import org.apache.camel.Exchange;
import org.springframework.amqp.AmqpException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.stereotype.Component;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;

/**
 * The one answer to "is this failure a database or broker that is away?": the only failures worth retrying, since
 * they pass by themselves. Every flow's route configuration asks it ({@code onWhen}) to wait such a failure out, or
 * to answer an API request 503; ingest asks it before splitting a failed batch to find the reading at fault.
 * A failure is away when it, or anything that caused it, is one of these.
 */
@Component("servicesAway")
public final class ServicesAway {

    private static final List<Class<? extends Throwable>> AWAY = List.of(
            TransientDataAccessException.class,
            DataAccessResourceFailureException.class,
            RecoverableDataAccessException.class,
            CannotCreateTransactionException.class,
            // a rollback that fails: the connection went away mid-transaction (a database restart); Spring then
            // reports this instead of the statement's own failure
            TransactionSystemException.class,
            AmqpException.class,
            SQLTransientException.class);

    /** Causes followed at most: a chain is short; this only guards against a cycle. */
    private static final int MAX_DEPTH = 32;

    public static boolean causedBy(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < MAX_DEPTH; depth++, t = t.getCause()) {
            for (Class<? extends Throwable> type : AWAY) {
                if (type.isInstance(t)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the failure is a statement the database cancelled for running past its statement timeout (SQLSTATE
     * 57014). It passes by itself too, and flows wait it out, but it is a busy or an oversized request, not a
     * service that is away, and the API says which.
     */
    public static boolean statementTimedOut(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < MAX_DEPTH; depth++, t = t.getCause()) {
            if (t instanceof org.springframework.dao.QueryTimeoutException
                    || t instanceof java.sql.SQLException e && "57014".equals(e.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /** For a route configuration's {@code onWhen}: the failure of the exchange at hand. */
    public boolean test(Exchange exchange) {
        Throwable failure = exchange.getException();
        if (failure == null) {
            failure = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        }
        return failure != null && causedBy(failure);
    }
}
