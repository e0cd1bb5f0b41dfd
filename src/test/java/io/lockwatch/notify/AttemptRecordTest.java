package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An attempt is recorded by what happened to its own POST, whatever else went wrong on the exchange that carried
 * it. Notifications are written straight into the outbox and the claim is woken by hand (the poll is ten minutes),
 * so each test decides what the claim finds.
 */
@CamelSpringBootTest
@SpringBootTest(properties = "lockwatch.notify.poll-interval=600000")
class AttemptRecordTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;
    @Autowired ClaimWakeUp wakeUps;

    /**
     * The claim a wake-up starts is split into the attempts, which inherit the wake-up exchange's properties. Found
     * by NotificationCrashIT: the wake-up after a failed attempt was a copy of its exchange, the caught exception went
     * with it into the next attempts, and notifications their clients had answered 200 were recorded as failed and
     * sent again. Here the wake-up carries a caught exception on purpose.
     */
    @Test
    void anAttemptIsJudgedByItsOwnAnswerNotByTheExchangeThatWokeTheClaim() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = dueNotificationTo(receiver.url(path));

        wakeUps.lookEverywhereNextTime();
        camel.createProducerTemplate().send("seda:notifications-recorded", e -> e.setProperty(Exchange.EXCEPTION_CAUGHT,
                new ConnectException("Connection refused (an earlier attempt to another client)")));

        awaitAttempts(client, 1);
        assertThat(receiver.at(path)).hasSize(1);
        assertThat(errors(client)).as("one attempt, not failed").containsExactly((String) null);
        assertThat(status(client)).isEqualTo("delivered");
    }

    /**
     * The postgres-restart drill: POSTs the clients answered while PostgreSQL was away were recorded, once it was
     * back, as failed (the database's error was taken for the POST's), then superseded by the next change or sent
     * again. Here the first write of the attempt fails in the database itself, as if it were away (a trigger raises
     * SQLSTATE 53300, which Spring reports as a resource failure), and is retried. A sequence counts the writes: it
     * is not rolled back with the failed one.
     */
    @Test
    void aDeliveredPostWhoseRecordWaitsOutTheDatabaseIsRecordedDelivered() {
        String path = "/hook-" + UUID.randomUUID();
        OutboxRows rows = new OutboxRows(jdbc);
        UUID client = rows.client(receiver.url(path));
        String fault = "test_fault_" + client.toString().replace("-", "");
        jdbc.execute("CREATE SEQUENCE " + fault);
        jdbc.execute("""
                CREATE FUNCTION %1$s() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.client_id = '%2$s' AND nextval('%1$s') = 1 THEN
                        RAISE EXCEPTION 'database away (test)' USING ERRCODE = '53300';
                    END IF;
                    RETURN NEW;
                END $$""".formatted(fault, client));
        jdbc.execute("CREATE TRIGGER %1$s BEFORE INSERT ON delivery_attempts FOR EACH ROW EXECUTE FUNCTION %1$s()"
                .formatted(fault));
        try {
            rows.due(client, rows.sensor(client), 1);

            wakeTheClaim();

            awaitAttempts(client, 1);
            assertThat(jdbc.queryForObject("SELECT last_value FROM " + fault, Long.class))
                    .as("the record was tried again after the database error").isEqualTo(2);
            assertThat(errors(client)).containsExactly((String) null);
            assertThat(status(client)).isEqualTo("delivered");
            assertThat(receiver.at(path)).as("posted once").hasSize(1);
        } finally {
            jdbc.execute("DROP TRIGGER " + fault + " ON delivery_attempts");
            jdbc.execute("DROP FUNCTION " + fault + "()");
            jdbc.execute("DROP SEQUENCE " + fault);
        }
    }

    /** A URL the target guard refuses is never requested; the attempt says why. */
    @Test
    void aRefusedTargetIsNotPostedAndTheAttemptSaysWhy() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = dueNotificationTo(receiver.url(path).replace("http://", "http://user:secret@"));

        wakeTheClaim();

        awaitAttempts(client, 1);
        assertThat(errors(client)).containsExactly("target refused: URL must not carry credentials");
        assertThat(receiver.at(path)).isEmpty();
    }

    /** A client, a sensor linked to it, a state change of that sensor, and its notification, due now. */
    private UUID dueNotificationTo(String url) {
        OutboxRows rows = new OutboxRows(jdbc);
        UUID client = rows.client(url);
        rows.due(client, rows.sensor(client), 1);
        return client;
    }

    private void wakeTheClaim() {
        wakeUps.wakeUp();
    }

    private void awaitAttempts(UUID client, int n) {
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM delivery_attempts WHERE client_id = ?", Integer.class, client) >= n);
    }

    private List<String> errors(UUID client) {
        return jdbc.queryForList("SELECT error FROM delivery_attempts WHERE client_id = ? ORDER BY attempt", String.class, client);
    }

    private String status(UUID client) {
        return jdbc.queryForObject("SELECT status FROM notifications WHERE client_id = ?", String.class, client);
    }
}
