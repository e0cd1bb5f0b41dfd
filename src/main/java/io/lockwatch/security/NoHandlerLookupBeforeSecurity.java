package io.lockwatch.security;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.ConstructorArgumentValues;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;

/**
 * Takes Spring MVC's handler lookup out of the front of Spring Security's filter chain.
 *
 * <p>With Spring MVC present, Spring Security 6.5 wraps its chain in a filter of {@code HandlerMappingIntrospector}
 * that looks up, for every request, which handler of every handler mapping would take it, and keeps the answer for
 * {@code MvcRequestMatcher} and CORS. lockwatch uses neither: its doors are {@code PathPatternRequestMatcher}s and it
 * answers no cross-origin request. The lookup runs through the API's hundred paths, per request: 18% of the request
 * threads' CPU and 13% of their garbage with 1,000 clients long-polling their feeds, whose held reads never reach a
 * handler at all. Spring Security 7 drops the wrapper; until then this puts the chain Spring Security built back in
 * its place. If that chain is not found where 6.5 puts it, nothing is changed.
 */
final class NoHandlerLookupBeforeSecurity implements BeanFactoryPostProcessor {

    static final String CHAIN = "springSecurityFilterChain";
    private static final String CONFIGURATIONS = "org.springframework.security.config.annotation.web.configuration.";
    private static final String LOOKUP_WRAPPER = CONFIGURATIONS + "WebMvcSecurityConfiguration$CompositeFilterChainProxy";
    private static final String PATH_WRAPPER = CONFIGURATIONS + "WebSecurityConfiguration$CompositeFilterChainProxy";
    private static final Logger log = LoggerFactory.getLogger(NoHandlerLookupBeforeSecurity.class);

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        if (!(beanFactory instanceof BeanDefinitionRegistry registry) || !registry.containsBeanDefinition(CHAIN)) {
            return;
        }
        BeanDefinition chain = registry.getBeanDefinition(CHAIN);
        BeanDefinition unwrapped = unwrapped(chain);
        if (unwrapped == null) {
            log.warn("Spring Security's filter chain is wrapped in a way this version does not know: every request "
                    + "still passes Spring MVC's handler lookup before it");
        } else if (unwrapped != chain) {
            registry.removeBeanDefinition(CHAIN);
            registry.registerBeanDefinition(CHAIN, unwrapped);
        }
    }

    /**
     * The chain's definition without the lookup's wrapper, wherever it is: outermost, or inside Spring Security's
     * other wrapper (which parses the request's path once for every matcher: that one stays). Null if a wrapper of
     * the lookup is there but not as 6.5 makes it.
     */
    private static BeanDefinition unwrapped(BeanDefinition definition) {
        String type = definition.getBeanClassName();
        if (!LOOKUP_WRAPPER.equals(type) && !PATH_WRAPPER.equals(type)) {
            return definition;
        }
        ConstructorArgumentValues.ValueHolder arg = definition.getConstructorArgumentValues().getIndexedArgumentValue(0, null);
        if (arg == null || !(arg.getValue() instanceof List<?> filters) || filters.size() != 2
                || !(filters.get(1) instanceof BeanDefinition inner)) {
            return LOOKUP_WRAPPER.equals(type) ? null : definition;
        }
        // [the introspector's cache filter, what it wraps] or [the path's parser, what it wraps]
        BeanDefinition innerUnwrapped = unwrapped(inner);
        if (innerUnwrapped == null || LOOKUP_WRAPPER.equals(type)) {
            return innerUnwrapped;
        }
        if (innerUnwrapped != inner) {
            @SuppressWarnings("unchecked")
            List<Object> list = (List<Object>) filters;
            list.set(1, innerUnwrapped);
        }
        return definition;
    }
}
