package io.lockwatch.api;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.util.unit.DataSize;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Every API body is bounded before anything parses it: one that declares a length over its limit is refused with a
 * 413 before a byte of it is read, and one sent without a length (chunked) is read only up to the limit, then
 * refused the same way. The limit is {@code lockwatch.api.max-body}, and {@code max-import-body} for a registry
 * file. What passes is handed on from memory; the connection of a refused one is closed, not drained.
 */
final class BodyLimit extends OncePerRequestFilter {

    private final long maxBody;
    private final long maxImportBody;

    BodyLimit(DataSize maxBody, DataSize maxImportBody) {
        this.maxBody = maxBody.toBytes();
        this.maxImportBody = maxImportBody.toBytes();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        boolean registryFile = request.getRequestURI().endsWith("/import");
        long limit = registryFile ? maxImportBody : maxBody;
        long declared = request.getContentLengthLong();
        if (declared > limit) {
            refuse(response, limit, registryFile);
            return;
        }
        byte[] body = request.getInputStream().readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
        if (body.length > limit) {
            refuse(response, limit, registryFile);
            return;
        }
        chain.doFilter(new ReplayedRequest(request, body), response);
    }

    private static void refuse(HttpServletResponse response, long limit, boolean registryFile) throws IOException {
        // the rest of the body is not read: the connection goes with the answer
        response.setHeader("Connection", "close");
        Problems.write(response, 413, "Content Too Large", "the request body is larger than " + DataSize.ofBytes(limit).toKilobytes()
                + " KB, the most " + (registryFile ? "a registry file may be (lockwatch.api.max-import-body)"
                : "an API request may carry (lockwatch.api.max-body)"));
    }
}
