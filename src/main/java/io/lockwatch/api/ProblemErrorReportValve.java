package io.lockwatch.api;

import java.io.IOException;
import java.io.Writer;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;

/**
 * Tomcat's own error answers (a request it refuses before any servlet sees it: headers too large, a request line it
 * cannot parse) as problem+json instead of its HTML page, and never with a stack trace or its version. Public:
 * Tomcat makes the valve from its class name (ApiConfiguration).
 */
public class ProblemErrorReportValve extends ErrorReportValve {

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0) {
            return;
        }
        AtomicBoolean ioAllowed = new AtomicBoolean(false);
        response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
        if (!ioAllowed.get()) {
            return;
        }
        try {
            response.setContentType(Problems.CONTENT_TYPE);
            response.setCharacterEncoding("utf-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write(Problems.json(Problems.body(status, HttpErrors.title(status), HttpErrors.detail(status), null)));
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // the connection is gone or the answer already begun: nothing more to say
        }
    }
}
