package io.lockwatch.api;

import java.io.IOException;
import java.io.InputStream;

/**
 * An answer's body read from a store a page at a time, as whoever writes the response reads it: an export of any size
 * holds one page in memory.
 */
abstract class PagedBody extends InputStream {

    private byte[] page = new byte[0];
    private int at;
    private boolean last;

    /** The next page's bytes; call {@link #lastPage()} when no page follows it. */
    protected abstract byte[] nextPage() throws IOException;

    protected final void lastPage() {
        last = true;
    }

    /** Reads the first page now, so that a failure to read it is met before the answer is committed. */
    final void prefetch() throws IOException {
        if (page.length == 0 && !last) {
            page = nextPage();
            at = 0;
        }
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        while (at == page.length) {
            if (last) {
                return -1;
            }
            page = nextPage();
            at = 0;
        }
        int n = Math.min(len, page.length - at);
        System.arraycopy(page, at, b, off, n);
        at += n;
        return n;
    }
}
