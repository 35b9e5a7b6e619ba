#!/usr/bin/env python3
"""An OpenLineage HTTP endpoint on loopback for lineage.sh (standard library).

    python3 tests/integration/ol_httpd.py DIR

Listens on 127.0.0.1 on a port the kernel picks and writes it to DIR/port
(atomically) once it accepts connections.  Every POST is answered 201 and
its body appended as one line to DIR/events.jsonl, after its request line
"POST PATH CONTENT-TYPE" went to DIR/requests.log; a POST whose path starts
with /fail500/ is answered 500 (and its body not kept).  Exits when its
parent process does (a test killed half-way leaves no server behind), or
on SIGTERM.
"""
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        fail = self.path.startswith("/fail500/")
        with LOCK:
            with open(os.path.join(DIR, "requests.log"), "a", encoding="utf-8") as f:
                f.write("POST %s %s\n" % (self.path, self.headers.get("Content-Type", "-")))
            if not fail:
                with open(os.path.join(DIR, "events.jsonl"), "ab") as f:
                    f.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(500 if fail else 201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def watch_parent(ppid):
    while os.getppid() == ppid:
        time.sleep(0.5)
    os._exit(0)


signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
tmp = os.path.join(DIR, "port.tmp")
with open(tmp, "w", encoding="utf-8") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, os.path.join(DIR, "port"))
srv.serve_forever()
