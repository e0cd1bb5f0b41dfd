package io.lockwatch.devices;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a device was refused, counted by check ({@code lockwatch.devices.refused}) and logged. A device (or anyone)
 * trying again and again must not fill the log: at most a line a second for each check, with how many were left out.
 */
final class Refusals {

    private static final Logger log = LoggerFactory.getLogger(Refusals.class);

    private final MeterRegistry meters;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> lastLogged = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> unlogged = new ConcurrentHashMap<>();

    Refusals(MeterRegistry meters) {
        this.meters = meters;
    }

    void refuse(String check, String login, String why) {
        counters.computeIfAbsent(check, c -> Counter.builder("lockwatch.devices.refused")
                .description("what a device asked to do and was refused: log in, open a vhost, use a resource, "
                        + "publish with a routing key (RabbitMQ's questions), or on the embedded MQTT listener")
                .tag("check", c).register(meters)).increment();
        long now = System.currentTimeMillis();
        AtomicLong last = lastLogged.computeIfAbsent(check, c -> new AtomicLong());
        AtomicLong skipped = unlogged.computeIfAbsent(check, c -> new AtomicLong());
        long before = last.get();
        if (now - before >= 1000 && last.compareAndSet(before, now)) {
            long more = skipped.getAndSet(0);
            log.warn("Device refused ({}): {}: {}{}", check, printable(login), printable(why, 300),
                    more == 0 ? "" : " (and " + more + " more refusals of " + check + " since the last line)");
        } else {
            skipped.incrementAndGet();
        }
    }

    /** Whatever a device typed, kept short and printable in the log. */
    static String printable(String text) {
        return printable(text, 80);
    }

    private static String printable(String text, int max) {
        if (text == null) {
            return "(none)";
        }
        String cut = text.length() > max ? text.substring(0, max) + "…" : text;
        return cut.replaceAll("[^\\x20-\\x7E…]", "?");
    }
}
