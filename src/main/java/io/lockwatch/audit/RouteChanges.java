package io.lockwatch.audit;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import org.apache.camel.Route;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.SimpleEventNotifierSupport;

/**
 * A route of the operator's routes directory reloaded live is a change like any other: recorded with the route, the
 * file it came from, and the directory as its actor (whoever may write the directory made it; RoutesDirectory refuses
 * one that anyone but its owner may write).
 */
final class RouteChanges extends SimpleEventNotifierSupport {

    private final Recorder recorder;
    private final Clock clock;

    RouteChanges(Recorder recorder, Clock clock) {
        this.recorder = recorder;
        this.clock = clock;
    }

    @Override
    public boolean isEnabled(CamelEvent event) {
        return event instanceof CamelEvent.RouteReloadedEvent;
    }

    @Override
    public void notify(CamelEvent event) {
        CamelEvent.RouteReloadedEvent reloaded = (CamelEvent.RouteReloadedEvent) event;
        Route route = reloaded.getRoute();
        Map<String, Object> details = new LinkedHashMap<>();
        String source = route.getSourceLocationShort(); // file:line
        if (source != null) {
            java.util.regex.Matcher line = java.util.regex.Pattern.compile("(.*):(\\d+)").matcher(source);
            details.put("file", line.matches() ? line.group(1) : source);
            if (line.matches()) {
                details.put("line", Integer.parseInt(line.group(2)));
            }
        }
        details.put("route", route.getRouteId());
        details.put("index", reloaded.getIndex());
        details.put("of", reloaded.getTotal());
        recorder.record(new AuditLog.Entry(UUID.randomUUID(), clock.instant(), "routes-directory", "file", null, null,
                "routes.reloaded", null, "routes/" + route.getRouteId(), Redaction.of(details), null, "succeeded",
                null, null, null));
    }
}
