package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/** The 503 says what kept the request from an answer: a service away, or a statement past its timeout. */
class ProblemsTest {

    private final Problems problems = new Problems();

    @Test
    void aStatementPastItsTimeoutIsNotReportedAsAServiceThatIsAway() throws Exception {
        JsonNode answer = unavailable(new QueryTimeoutException("PreparedStatementCallback",
                new PSQLException("ERROR: canceling statement due to statement timeout", PSQLState.QUERY_CANCELED)));

        assertThat(answer.get("status").asInt()).isEqualTo(503);
        assertThat(answer.get("detail").asText()).contains("statement timeout").contains("correlation id c0ffee")
                .doesNotContain("not available");
    }

    @Test
    void aDatabaseThatIsAwayIsSaidToBeAway() throws Exception {
        JsonNode answer = unavailable(new CannotGetJdbcConnectionException("no connection"));

        assertThat(answer.get("detail").asText()).contains("not available").doesNotContain("timeout");
    }

    private JsonNode unavailable(Throwable cause) throws Exception {
        try (DefaultCamelContext camel = new DefaultCamelContext()) {
            Exchange exchange = new DefaultExchange(camel);
            exchange.getMessage().setHeader(CorrelationIds.HEADER, "c0ffee");
            exchange.setProperty(Exchange.EXCEPTION_CAUGHT, cause);
            problems.unavailable(exchange);
            assertThat(exchange.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE)).isEqualTo(503);
            assertThat(exchange.getMessage().getHeader("Retry-After")).isEqualTo("5");
            return Json.MAPPER.readTree(exchange.getMessage().getBody(String.class));
        }
    }
}
