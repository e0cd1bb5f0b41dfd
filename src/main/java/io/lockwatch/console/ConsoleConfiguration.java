package io.lockwatch.console;

import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.ViewControllerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The operator console: a static page in the jar ({@code static/console/}) that works on the REST API with the
 * operator's token. {@code /console} and {@code /console/} lead to it. Beside it the API reference, {@code /api/docs}:
 * a static page ({@code static/api/docs/}) rendering the contract with Redoc's bundle from the jar.
 */
@Configuration(proxyBeanMethods = false)
class ConsoleConfiguration implements WebMvcConfigurer {

    @Override
    public void addViewControllers(ViewControllerRegistry registry) {
        registry.addRedirectViewController("/console", "/console/index.html");
        registry.addRedirectViewController("/console/", "/console/index.html");
        // the page itself at its address, as /api/v1/openapi.json beside it (its own links are absolute)
        registry.addViewController("/api/docs").setViewName("forward:/api/docs/index.html");
    }
}
