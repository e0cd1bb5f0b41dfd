package io.lockwatch.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A benchmark's command line: {@code --name value} options, the last one given counting (or each, for a list), and
 * switches without a value. An option that no reader asks for is unknown ({@link #rejectUnknown}), so the names are
 * written once, where each is read.
 */
final class CommandLine {

    private final Map<String, List<String>> given = new LinkedHashMap<>();
    private final Set<String> asked = new HashSet<>();

    CommandLine(String[] args, String... switches) {
        Set<String> valueless = Set.of(switches);
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (valueless.contains(name)) {
                given.computeIfAbsent(name, n -> new ArrayList<>()).add("true");
                continue;
            }
            if (!name.startsWith("--")) {
                throw new IllegalArgumentException("unknown option " + name);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value after " + name);
            }
            given.computeIfAbsent(name, n -> new ArrayList<>()).add(args[++i]);
        }
    }

    boolean on(String name) {
        return last(name) != null;
    }

    String text(String name, String otherwise) {
        String v = last(name);
        return v == null ? otherwise : v;
    }

    int integer(String name, int otherwise) {
        String v = last(name);
        return v == null ? otherwise : Integer.parseInt(v);
    }

    /** The value, or null when the option is not given (a default that depends on other options). */
    Integer integer(String name) {
        String v = last(name);
        return v == null ? null : Integer.valueOf(v);
    }

    long whole(String name, long otherwise) {
        String v = last(name);
        return v == null ? otherwise : Long.parseLong(v);
    }

    double number(String name, double otherwise) {
        String v = last(name);
        return v == null ? otherwise : Double.parseDouble(v);
    }

    Path path(String name, Path otherwise) {
        String v = last(name);
        return v == null ? otherwise : Path.of(v);
    }

    /** Every value of an option that may be given more than once, in order. */
    List<String> all(String name) {
        asked.add(name);
        return List.copyOf(given.getOrDefault(name, List.of()));
    }

    /** Refuses an option that no reader asked for; call it after reading them all. */
    void rejectUnknown() {
        for (String name : given.keySet()) {
            if (!asked.contains(name)) {
                throw new IllegalArgumentException("unknown option " + name);
            }
        }
    }

    private String last(String name) {
        asked.add(name);
        List<String> values = given.get(name);
        return values == null ? null : values.get(values.size() - 1);
    }
}
