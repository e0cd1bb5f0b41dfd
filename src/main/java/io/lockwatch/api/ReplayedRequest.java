package io.lockwatch.api;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/**
 * A request whose body a filter has read (and bounded) once, read again by what comes after it: from memory, or
 * from the temporary file a large body was written to.
 */
public final class ReplayedRequest extends HttpServletRequestWrapper {
    private final byte[] body;
    private final Path file;
    private final long length;

    public ReplayedRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
        this.file = null;
        this.length = body.length;
    }

    ReplayedRequest(HttpServletRequest request, Path file) throws IOException {
        super(request);
        this.body = null;
        this.file = file;
        this.length = Files.size(file);
    }

    @Override
    public ServletInputStream getInputStream() {
        InputStream in;
        try {
            in = file == null ? new ByteArrayInputStream(body) : new java.io.BufferedInputStream(Files.newInputStream(file), 1 << 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ServletInputStream() {
            private boolean finished;

            @Override
            public int read() throws IOException {
                int b = in.read();
                finished = b < 0;
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                finished = n < 0;
                return n;
            }

            @Override
            public void close() throws IOException {
                in.close();
            }

            @Override
            public boolean isFinished() {
                try {
                    return finished || in.available() == 0;
                } catch (IOException e) {
                    return true;
                }
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                throw new UnsupportedOperationException("read synchronously");
            }
        };
    }

    @Override
    public java.io.BufferedReader getReader() {
        String encoding = getCharacterEncoding() == null ? "UTF-8" : getCharacterEncoding();
        return new java.io.BufferedReader(new java.io.InputStreamReader(getInputStream(), java.nio.charset.Charset.forName(encoding)));
    }

    @Override
    public int getContentLength() {
        return length > Integer.MAX_VALUE ? -1 : (int) length;
    }

    @Override
    public long getContentLengthLong() {
        return length;
    }
}
