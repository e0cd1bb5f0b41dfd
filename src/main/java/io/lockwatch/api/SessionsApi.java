package io.lockwatch.api;

import java.util.UUID;

import io.lockwatch.security.SignIns;
import org.apache.camel.Exchange;

/** People signed in to the console at the identity provider: listed while their tokens last, and signed out. */
public class SessionsApi {

    private final SignIns signIns;

    public SessionsApi(SignIns signIns) {
        this.signIns = signIns;
    }

    public void list(Exchange exchange) {
        Json.respond(exchange, 200, new ResponseBodies.Page<>(signIns.live(), null));
    }

    public void end(Exchange exchange) {
        UUID id = Json.uuid(exchange, "sessionId", "sign-in");
        if (!signIns.end(id, ClientScope.caller(exchange))) {
            throw ApiProblem.notFound("sign-in " + id);
        }
        Json.respond(exchange, 204, null);
    }
}
