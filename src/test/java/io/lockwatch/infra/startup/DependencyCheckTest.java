package io.lockwatch.infra.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.InetAddress;
import java.net.ServerSocket;

import io.lockwatch.LockwatchApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Started against services that are not there, the external profile fails fast with one clear line. */
class DependencyCheckTest {

    @Test
    void startFailsNamingTheDatabaseThatIsNotThere() throws Exception {
        int closedPort = closedPort();

        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(LockwatchApplication.class)
                .profiles("external")
                .web(WebApplicationType.NONE)
                .run("--spring.datasource.url=jdbc:postgresql://127.0.0.1:" + closedPort + "/lockwatch?password=s3cret",
                        "--lockwatch.startup.dependency-wait=1s")
                .close());

        assertThat(failure).isInstanceOf(DependencyUnavailableException.class);
        assertThat(failure.getMessage())
                .startsWith("PostgreSQL at jdbc:postgresql://127.0.0.1:" + closedPort + "/lockwatch is not reachable: ")
                .doesNotContain("s3cret")
                .doesNotContain("\n");
        FailureAnalysis analysis = new DependencyUnavailableFailureAnalyzer().analyze(failure);
        assertThat(analysis.getDescription()).isEqualTo(failure.getMessage());
        assertThat(analysis.getAction()).contains("spring.datasource.url").contains("scripts/services.sh up");
    }

    @Test
    void startFailsNamingTheBrokerThatIsNotThere() throws Exception {
        int closedPort = closedPort();
        DependencyCheck check = new DependencyCheck();
        org.springframework.mock.env.MockEnvironment env = new org.springframework.mock.env.MockEnvironment()
                .withProperty("spring.rabbitmq.host", "127.0.0.1")
                .withProperty("spring.rabbitmq.port", String.valueOf(closedPort))
                .withProperty("lockwatch.startup.dependency-wait", "0s");
        env.setActiveProfiles("external");

        Throwable failure = catchThrowable(() -> check.awaitOrFail(DependencyCheck.rabbit(env), System.nanoTime()));

        assertThat(failure).isInstanceOf(DependencyUnavailableException.class)
                .hasMessageStartingWith("RabbitMQ at 127.0.0.1:" + closedPort + " is not reachable: ");
    }

    @Test
    void aClusterIsThereWhenAnyOfItsNodesAnswers() throws Exception {
        int closedPort = closedPort();
        try (ServerSocket open = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            org.springframework.mock.env.MockEnvironment env = new org.springframework.mock.env.MockEnvironment()
                    .withProperty("spring.rabbitmq.addresses", "127.0.0.1:" + closedPort + ", amqp://guest:guest@127.0.0.1:"
                            + open.getLocalPort() + "/vhost");
            assertThat(DependencyCheck.rabbit(env).check().get()).isNull();

            env.setProperty("spring.rabbitmq.addresses", "127.0.0.1:" + closedPort + ",127.0.0.1:" + closedPort);
            assertThat(DependencyCheck.rabbit(env).check().get()).startsWith("127.0.0.1:" + closedPort + ": ");
        }
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort(); // closed again when this returns: nothing listens there
        }
    }
}
