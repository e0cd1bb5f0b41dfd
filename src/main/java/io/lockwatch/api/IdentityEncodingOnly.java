package io.lockwatch.api;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A request body with a content coding (gzip, deflate, …) is refused with a 415 before anything reads it (RFC 9110,
 * 8.4). The body limit counts the bytes as sent, so a compressed body could inflate to many times that in memory;
 * and a body that is not what its coding says failed deep in the HTTP binding, as a 500.
 */
final class IdentityEncodingOnly extends OncePerRequestFilter {

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String coding = request.getHeader("Content-Encoding");
        if (coding != null && !coding.isBlank() && !coding.trim().equalsIgnoreCase("identity")) {
            response.setHeader("Accept-Encoding", "identity");
            Problems.write(response, 415, "Unsupported Media Type", "request bodies are taken uncompressed: Content-Encoding "
                    + (coding.length() > 40 ? coding.substring(0, 40) + "…" : coding) + " is not accepted");
            return;
        }
        chain.doFilter(request, response);
    }
}
