package io.lockwatch.bench;

import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes maps, lists, strings, numbers, booleans and null as JSON (all the benchmark's report needs). */
final class Json {

    private Json() {
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, "");
        return out.append('\n').toString();
    }

    private static void write(Object value, StringBuilder out, String indent) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(s, out);
        } else if (value instanceof Double d) {
            out.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.3f", d)
                    .replaceAll("0+$", "").replaceAll("\\.$", ""));
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            String inner = indent + "  ";
            out.append('{');
            Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                out.append('\n').append(inner);
                string(String.valueOf(e.getKey()), out);
                out.append(": ");
                write(e.getValue(), out, inner);
                if (it.hasNext()) {
                    out.append(',');
                }
            }
            out.append(map.isEmpty() ? "}" : "\n" + indent + "}");
        } else if (value instanceof List<?> list) {
            // lists of plain values on one line, lists of objects one per line
            boolean flat = list.stream().noneMatch(v -> v instanceof Map || v instanceof List);
            String inner = indent + "  ";
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (!flat) {
                    out.append('\n').append(inner);
                }
                write(list.get(i), out, inner);
                if (i + 1 < list.size()) {
                    out.append(flat ? ", " : ",");
                }
            }
            out.append(flat || list.isEmpty() ? "]" : "\n" + indent + "]");
        } else {
            string(value.toString(), out);
        }
    }

    private static void string(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
