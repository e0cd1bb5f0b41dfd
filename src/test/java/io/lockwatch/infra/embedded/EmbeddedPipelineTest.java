package io.lockwatch.infra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.lockwatch.LockwatchApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * An instance without the pipeline serves the API beside instances that apply the readings. On the embedded default
 * no other instance shares its broker and database, so its readings would wait forever: the start is refused.
 */
class EmbeddedPipelineTest {

    @Test
    void theEmbeddedDefaultRefusesToRunWithoutThePipeline() {
        Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(LockwatchApplication.class)
                .web(WebApplicationType.NONE)
                // ephemeral: were the refusal gone, the services would start in a directory deleted on stop
                .run("--lockwatch.pipeline.enabled=false", "--lockwatch.embedded.ephemeral=true")
                .close());

        assertThat(failure).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lockwatch.pipeline.enabled=false needs the external profile");
    }
}
