package io.lockwatch.api;

import java.time.Duration;
import java.util.UUID;

import io.lockwatch.selfservice.ClientKeys;
import io.lockwatch.selfservice.PortalLinks;
import org.apache.camel.Exchange;

/** The client portal's doors: links an operator makes, the session a link opens once, and who the caller is. */
public class PortalApi {

    private final PortalLinks links;

    PortalApi(PortalLinks links) {
        this.links = links;
    }

    public void createLink(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        RequestBodies.PortalLinkCreate body = Json.bind(exchange, RequestBodies.PortalLinkCreate.class);
        PortalLinks.NewLink link = links.create(client, body.role() == null ? ClientKeys.ADMIN : body.role(),
                Duration.ofSeconds(body.ttlSeconds() == null ? 900 : body.ttlSeconds()), ClientScope.caller(exchange));
        if (link == null) {
            throw ApiProblem.notFound("client " + client);
        }
        // the secret rides in the fragment, which browsers never send: it is in no server's log on the way
        String path = "/console/#portal=" + link.token();
        var request = ClientScope.request(exchange);
        String url = request.getScheme() + "://" + request.getHeader("Host") + path;
        Json.respond(exchange, 201, new ResponseBodies.PortalLink(link.id(), url, link.expiresAt()));
    }

    public void openSession(Exchange exchange) {
        RequestBodies.PortalSessionCreate body = Json.bind(exchange, RequestBodies.PortalSessionCreate.class);
        PortalLinks.Session session = links.use(body.link());
        if (session == null) {
            throw ApiProblem.notFound("a portal link that is still good (it is good once, until it expires)");
        }
        Json.respond(exchange, 201, session);
    }

    /** Who the caller is: an operator's token, or a client's key (and its client). */
    public void me(Exchange exchange) {
        ClientKeys.Holder holder = ClientScope.holder(exchange);
        String name = ClientScope.caller(exchange);
        if (holder != null) {
            Json.respond(exchange, 200, new ResponseBodies.Caller("client", holder.role(), name, holder.clientId(),
                    holder.keyId()));
        } else {
            boolean full = Boolean.TRUE.equals(ClientScope.request(exchange).getAttribute(io.lockwatch.security.CallerAttributes.OPERATOR));
            Json.respond(exchange, 200, new ResponseBodies.Caller("operator", full ? "operator-full" : "operator-read", name,
                    null, null));
        }
    }
}
