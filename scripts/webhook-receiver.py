#!/usr/bin/env python3
"""A webhook receiver for trying lockwatch: prints every POST it gets (headers and body) and answers 204.

Usage: scripts/webhook-receiver.py [port]   (default 9099, on 127.0.0.1; Ctrl-C stops it)
With --log FILE it also appends each request body, one per line, to FILE (used by scripts/walkthrough.sh).
"""
import http.server
import sys

port = 9099
log = None
args = sys.argv[1:]
if "--log" in args:
    i = args.index("--log")
    log = args[i + 1]
    del args[i:i + 2]
if args:
    port = int(args[0])


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8", "replace")
        print(f"POST {self.path}  webhook-id={self.headers.get('webhook-id')}  "
              f"webhook-signature={self.headers.get('webhook-signature')}\n  {body}", flush=True)
        if log:
            with open(log, "a") as f:
                f.write(body + "\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
