package io.lockwatch.security;

import java.io.IOException;

import io.lockwatch.api.Problems;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.security.web.firewall.RequestRejectedHandler;

/** Every refusal of the security chain as problem+json, like the API's own answers. */
final class ProblemResponses implements AuthenticationEntryPoint, AccessDeniedHandler, RequestRejectedHandler {

    /** 401: no token, or one that is not valid. Browsers opening Hawtio are asked for Basic credentials. */
    @Override
    public void commence(HttpServletRequest request, HttpServletResponse response, AuthenticationException e) throws IOException {
        if (e instanceof org.springframework.security.authentication.AuthenticationServiceException) {
            // the registry that holds client keys is away: not the caller's fault, and soon over
            // (or the identity provider that vouches for a person's token)
            response.setHeader("Retry-After", "5");
            Problems.write(response, 503, "Service Unavailable", (e.getMessage().contains("identity provider")
                    ? "the identity provider cannot be reached to check the token (static tokens still work)"
                    : "the key cannot be checked now") + "; try again shortly");
            return;
        }
        boolean api = request.getServletPath().startsWith("/api/");
        response.setHeader("WWW-Authenticate", (api ? "Bearer" : "Basic") + " realm=\"lockwatch\"");
        // a person's token says what is wrong with it (expired, another audience or issuer); nothing else is told
        String detail = e.getMessage() != null && e.getMessage().startsWith(SsoTokens.NOT_VALID) ? e.getMessage()
                : "a valid bearer token is required";
        Problems.write(response, 401, "Unauthorized", detail);
    }

    /** 403: a read token asking to change something. */
    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, AccessDeniedException e) throws IOException {
        org.springframework.security.core.Authentication auth =
                org.springframework.security.core.context.SecurityContextHolder.getContext().getAuthentication();
        if (auth != null && auth.getDetails() instanceof SsoTokens.Person person && auth.getAuthorities().isEmpty()) {
            Problems.write(response, 403, "Forbidden", "signed in as " + person.name() + ", but no role of yours is one "
                    + "lockwatch knows (lockwatch.sso.operator-roles, lockwatch.sso.viewer-roles): ask your administrator");
            return;
        }
        Problems.write(response, 403, "Forbidden", request.getAttribute(io.lockwatch.selfservice.ClientKeys.REQUEST_ATTRIBUTE) != null
                ? "a client's key reaches only the API, for its own client" : "this token may only read");
    }

    /**
     * 404: a path that is not in normal form (';' parameters, '//', '/./', '/../', an encoded '/', '.' or '%'). The
     * container would route it somewhere other than its text says, so it names nothing here.
     */
    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RequestRejectedException e) throws IOException {
        Problems.write(response, 404, "Not Found", "no such path: the path must be in normal form, without ';', '//', '/./', "
                + "'/../' or an encoded '/', '.' or '%'");
    }
}
