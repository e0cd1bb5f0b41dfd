#!/usr/bin/env python3
# scripts/otlp-sink.py PORT: an OTLP/HTTP endpoint on loopback for the tracing-on benchmark (docs/BENCHMARKS.md,
# "Tracing"). It answers 200 to every POST and drops the spans; GET / tells how many requests and bytes came.
import http.server, sys
count = {"requests": 0, "bytes": 0}
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        count["requests"] += 1; count["bytes"] += n
        self.send_response(200); self.send_header("Content-Type", "application/x-protobuf"); self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):
        body = ("%d %d\n" % (count["requests"], count["bytes"])).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
