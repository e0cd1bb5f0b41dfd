package io.lockwatch.api;

import java.io.ByteArrayInputStream;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/** A request whose body a filter has read (and bounded) once, read again from memory by what comes after it. */
public final class ReplayedRequest extends HttpServletRequestWrapper {
    private final byte[] body;

    public ReplayedRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        return new ServletInputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, len);
            }

            @Override
            public boolean isFinished() {
                return in.available() == 0;
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
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }
}
