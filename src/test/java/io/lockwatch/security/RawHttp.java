package io.lockwatch.security;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, so that a path reaches the server exactly as written: Java's HTTP client would
 * normalise or refuse some of the variants an attacker sends ({@code //}, {@code ;x=1}, {@code /./}).
 */
final class RawHttp {

    record Response(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final int port;

    RawHttp(int port) {
        this.port = port;
    }

    Response send(String method, String path, Map<String, String> headers, String body) throws IOException {
        byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder()
                .append(method).append(' ').append(path).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(port).append("\r\n")
                .append("Connection: close\r\n");
        headers.forEach((k, v) -> request.append(k).append(": ").append(v).append("\r\n"));
        if (body != null) {
            request.append("Content-Length: ").append(content.length).append("\r\n");
        }
        request.append("\r\n");
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().write(content);
            socket.getOutputStream().flush();
            return parse(socket.getInputStream().readAllBytes());
        }
    }

    private static Response parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        String[] head = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(head[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < head.length; i++) {
            int colon = head[i].indexOf(':');
            headers.merge(head[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), head[i].substring(colon + 1).trim(),
                    (a, b) -> a + ", " + b);
        }
        byte[] rest = java.util.Arrays.copyOfRange(raw, end + 4, raw.length);
        byte[] body = "chunked".equalsIgnoreCase(headers.get("transfer-encoding")) ? dechunk(rest) : rest;
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static byte[] dechunk(byte[] chunked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        while (at < chunked.length) {
            int lineEnd = indexOfCrlf(chunked, at);
            String sizeLine = new String(chunked, at, lineEnd - at, StandardCharsets.ISO_8859_1);
            int size = Integer.parseInt(sizeLine.split(";")[0].trim(), 16);
            if (size == 0) {
                break;
            }
            out.write(chunked, lineEnd + 2, size);
            at = lineEnd + 2 + size + 2;
        }
        return out.toByteArray();
    }

    private static int indexOfCrlf(byte[] bytes, int from) {
        for (int i = from; i < bytes.length - 1; i++) {
            if (bytes[i] == '\r' && bytes[i + 1] == '\n') {
                return i;
            }
        }
        throw new IllegalStateException("a chunk without its size line");
    }
}
