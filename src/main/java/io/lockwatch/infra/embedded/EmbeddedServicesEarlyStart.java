package io.lockwatch.infra.embedded;

import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Profiles;

/**
 * Starts the embedded PostgreSQL and AMQP broker as the application context is prepared, before its configuration
 * is even read: their start (the broker's store, the postmaster) then runs beside the seconds the context spends
 * on its configuration classes and first beans, where the first bean that connects used to wait for it.
 *
 * <p>The services are the context's singleton {@value #BEAN}, closed with it: after every bean that depends on
 * them, on a failed start as on a stop; an ephemeral data directory is deleted once both have stopped. Only the root
 * context of the embedded profile starts them (the management context, a child, shares its parent's).
 */
public final class EmbeddedServicesEarlyStart implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    static final String BEAN = "embeddedServicesStart";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        if (context.getParent() != null
                || !context.getEnvironment().acceptsProfiles(Profiles.of(EmbeddedEnvironmentPostProcessor.PROFILE))
                || !(context.getBeanFactory() instanceof DefaultSingletonBeanRegistry registry)) {
            return;
        }
        EmbeddedProperties props = Binder.get(context.getEnvironment())
                .bindOrCreate("lockwatch.embedded", EmbeddedProperties.class);
        EmbeddedServicesStart services = EmbeddedServicesConfiguration.start(props);
        EmbeddedServicesConfiguration.EphemeralDataDirectory dataDir =
                new EmbeddedServicesConfiguration.EphemeralDataDirectory(props.ephemeral() ? props.dataDir() : null);
        registry.registerSingleton(BEAN, services);
        registry.registerDisposableBean(BEAN, () -> {
            try {
                services.close();
            } finally {
                dataDir.close();
            }
        });
    }
}
