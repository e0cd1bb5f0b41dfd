package io.lockwatch.testing;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.test.context.BootstrapUtils;

/**
 * The test classes in their given (alphabetical) order, except that the classes of one Spring configuration follow
 * the first of them. The context cache holds one context (spring.properties), so every change of configuration
 * between two classes starts a context again (an embedded broker, PostgreSQL and Camel: 10-20 s each); grouped,
 * each configuration's context is started once, unless a class closes it (@DirtiesContext).
 */
public class ContextOrder implements ClassOrderer {

    @Override
    public void orderClasses(ClassOrdererContext context) {
        List<? extends ClassDescriptor> classes = context.getClassDescriptors();
        Map<Object, Integer> firstOfConfiguration = new HashMap<>();
        Map<ClassDescriptor, Integer> rank = new HashMap<>();
        for (int i = 0; i < classes.size(); i++) {
            ClassDescriptor d = classes.get(i);
            Object key = configuration(d.getTestClass());
            int position = i;
            rank.put(d, key == null ? i : firstOfConfiguration.computeIfAbsent(key, k -> position));
        }
        // a stable sort: within a configuration, and among classes without one, the given order stays
        classes.sort((a, b) -> Integer.compare(rank.get(a), rank.get(b)));
    }

    /** The context cache's key (a MergedContextConfiguration), null for a class that builds no Spring context. */
    static Object configuration(Class<?> test) {
        if (!MergedAnnotations.from(test, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY).isPresent(SpringBootTest.class)) {
            return null;
        }
        try {
            return BootstrapUtils.resolveTestContextBootstrapper(test).buildMergedContextConfiguration();
        } catch (RuntimeException e) {
            return null; // left where it is; the class's own run reports what is wrong with its configuration
        }
    }
}
