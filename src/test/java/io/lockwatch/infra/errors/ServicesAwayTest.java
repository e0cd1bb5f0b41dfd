package io.lockwatch.infra.errors;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.sql.SQLTransientConnectionException;

import org.apache.camel.RuntimeCamelException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.TransactionSystemException;

class ServicesAwayTest {

    @Test
    void aDatabaseOrBrokerThatIsAwayIsAwayHoweverDeepItsFailureIsWrapped() {
        assertThat(ServicesAway.causedBy(new CannotGetJdbcConnectionException("no connection",
                new PSQLException("refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT, new ConnectException())))).isTrue();
        assertThat(ServicesAway.causedBy(new AmqpConnectException(new ConnectException("refused")))).isTrue();
        assertThat(ServicesAway.causedBy(new SQLTransientConnectionException("pool exhausted"))).isTrue();
        // a restart mid-transaction: the rollback's failure hides the statement's
        assertThat(ServicesAway.causedBy(new TransactionSystemException("JDBC rollback failed",
                new PSQLException("This connection has been closed.", PSQLState.CONNECTION_DOES_NOT_EXIST)))).isTrue();
        assertThat(ServicesAway.causedBy(new RuntimeCamelException(new IllegalStateException("step",
                new CannotGetJdbcConnectionException("no connection"))))).isTrue();
    }

    @Test
    void aDefectOrAStatementTheDatabaseRefusesIsNotAway() {
        assertThat(ServicesAway.causedBy(new IllegalStateException("a defect"))).isFalse();
        assertThat(ServicesAway.causedBy(new DataIntegrityViolationException("duplicate key"))).isFalse();
        assertThat(ServicesAway.causedBy(new PSQLException("syntax error", PSQLState.SYNTAX_ERROR))).isFalse();
        assertThat(ServicesAway.causedBy(null)).isFalse();
    }

    @Test
    void aStatementCancelledAtItsTimeoutIsToldApartFromAServiceThatIsAway() {
        PSQLException cancelled = new PSQLException("ERROR: canceling statement due to statement timeout",
                PSQLState.QUERY_CANCELED);
        assertThat(ServicesAway.statementTimedOut(new org.springframework.dao.QueryTimeoutException("timeout", cancelled)))
                .isTrue();
        assertThat(ServicesAway.statementTimedOut(new RuntimeCamelException(cancelled))).isTrue();
        // still waited out by the flows
        assertThat(ServicesAway.causedBy(new org.springframework.dao.QueryTimeoutException("timeout", cancelled))).isTrue();
        assertThat(ServicesAway.statementTimedOut(new CannotGetJdbcConnectionException("no connection",
                new PSQLException("refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT)))).isFalse();
        assertThat(ServicesAway.statementTimedOut(null)).isFalse();
    }

    @Test
    void aCycleOfCausesEnds() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalArgumentException b = new IllegalArgumentException("b", a);
        a.initCause(b);
        assertThat(ServicesAway.causedBy(a)).isFalse();
    }
}
