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
 * file. What passes is handed on from memory (a registry file from a temporary file); the connection of a refused
 * one is closed, not drained.
 */
final class BodyLimit extends OncePerRequestFilter {

    private static final byte[] NO_BODY = new byte[0];

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
        if (registryFile) {
            spooled(request, response, chain, limit);
            return;
        }
        if (declared == 0 || declared < 0 && request.getHeader("Transfer-Encoding") == null
                && request.getProtocol().startsWith("HTTP/1.")) {
            // no body (a GET, a long poll: HTTP/1.1 gives a request neither length nor chunks only when it has none):
            // nothing to read, and no read buffer made on every request
            chain.doFilter(new ReplayedRequest(request, NO_BODY), response);
            return;
        }
        byte[] body = request.getInputStream().readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
        if (body.length > limit) {
            refuse(response, limit, false);
            return;
        }
        chain.doFilter(new ReplayedRequest(request, body), response);
    }

    /** A registry file, up to hundreds of megabytes, goes to a temporary file as it comes, never into the heap. */
    private static void spooled(HttpServletRequest request, HttpServletResponse response, FilterChain chain, long limit)
            throws IOException, ServletException {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("lockwatch-import-", ".body");
        boolean handedOn = false;
        try {
            long length;
            try (var in = request.getInputStream(); var out = java.nio.file.Files.newOutputStream(file)) {
                length = copyAtMost(in, out, limit + 1);
            }
            if (length > limit) {
                refuse(response, limit, true);
                return;
            }
            ReplayedRequest replayed = new ReplayedRequest(request, file);
            chain.doFilter(replayed, response);
            if (replayed.isAsyncStarted()) {
                // platform-http answers on a thread of its own: the file goes when the request is done
                replayed.getAsyncContext().addListener(new Deleting(file));
                handedOn = true;
            }
        } finally {
            if (!handedOn) {
                java.nio.file.Files.deleteIfExists(file);
            }
        }
    }

    /** Deletes a spooled body once its asynchronous request has been answered, whichever way it ended. */
    private record Deleting(java.nio.file.Path file) implements jakarta.servlet.AsyncListener {
        @Override
        public void onComplete(jakarta.servlet.AsyncEvent event) throws IOException {
            java.nio.file.Files.deleteIfExists(file);
        }

        @Override
        public void onTimeout(jakarta.servlet.AsyncEvent event) throws IOException {
            java.nio.file.Files.deleteIfExists(file);
        }

        @Override
        public void onError(jakarta.servlet.AsyncEvent event) throws IOException {
            java.nio.file.Files.deleteIfExists(file);
        }

        @Override
        public void onStartAsync(jakarta.servlet.AsyncEvent event) {
            // still the same request: the file is still needed
        }
    }

    private static long copyAtMost(java.io.InputStream in, java.io.OutputStream out, long most) throws IOException {
        byte[] buffer = new byte[1 << 16];
        long copied = 0;
        int n;
        while (copied < most && (n = in.read(buffer, 0, (int) Math.min(buffer.length, most - copied))) >= 0) {
            out.write(buffer, 0, n);
            copied += n;
        }
        return copied;
    }

    private static void refuse(HttpServletResponse response, long limit, boolean registryFile) throws IOException {
        // the rest of the body is not read: the connection goes with the answer
        response.setHeader("Connection", "close");
        Problems.write(response, 413, "Content Too Large", "the request body is larger than " + DataSize.ofBytes(limit).toKilobytes()
                + " KB, the most " + (registryFile ? "a registry file may be (lockwatch.api.max-import-body)"
                : "an API request may carry (lockwatch.api.max-body)"));
    }
}
