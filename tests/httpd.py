#!/usr/bin/env python3
"""A JSON API on loopback for the http_json tests (Python standard library).

    python3 tests/httpd.py DIR [CERT KEY]   (with CERT and KEY: HTTPS)

Exits when its parent process does (so a test killed half-way leaves no
server behind), or on SIGTERM.  Listens on 127.0.0.1, on a port the kernel picks, and writes that port to
DIR/port (atomically) once it accepts connections.  Serves the records of
DIR/NAME.json (a JSON array of objects; rewrite the file between runs to
change the API's data), and logs every request to DIR/requests.log as
"METHOD PATH?QUERY STATUS token=ok|bad|none" (never a header's value).

A path is modifiers, then a style, then NAME:

  styles (records sorted as in the file; `size` query parameter, default 2,
  is the page size; `since` or `updated_since` keeps the records whose lmd
  or updated_at is greater, compared as text):
    /next/NAME?page=N     {"data": [...], "links": {"next": "http://.../next/NAME?page=N+1" or null}}
    /link/NAME?page=N     [...] and a Link header <...page=N+1>; rel="next" (relative)
    /pages/NAME?page=N    {"items": [...]}, empty past the end
    /cursor/NAME?after=C  {"results": [...], "meta": {"next_cursor": C' or null}}
    /nested/NAME          {"data": [...]} with each record wrapped as {"id":..,"attrs":{...}}
  modifiers:
    /flaky/STATUS/N/...   the first N requests for this exact URL answer STATUS
                          (429 and 503 with Retry-After: 1)
    /slow/SECONDS/...     answers after SECONDS
    /auth/...             401 unless X-Api-Token equals the text of DIR/token
    /failpage/N/...       500 for the request whose page parameter is N
  others:
    /truncated/NAME       promises more bytes (Content-Length) than it sends
    /cut/NAME             the body ends inside the JSON (no Content-Length)
    /html                 a 200 HTML page
    /echo                 a 400 whose body repeats the URL and the X-Api-Token header
    /loop                 redirects to itself
    /moved/NAME           redirects to /next/NAME
    /away/NAME            redirects to /next/NAME on http://localhost (another host)
    /big/BYTES            a page of one record holding BYTES bytes of text
    /raw/FILE             DIR/FILE byte for byte, as a 200 JSON page
"""
import json
import os
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
SCHEME = "https" if len(sys.argv) > 3 else "http"
LOG_LOCK = threading.Lock()
COUNTS = {}


def records(name, query):
    with open(os.path.join(DIR, os.path.basename(name) + ".json"), encoding="utf-8") as f:
        recs = json.load(f)
    since = query.get("since") or query.get("updated_since")
    if since:
        recs = [r for r in recs if str(r.get("lmd", r.get("updated_at", ""))) > since]
    return recs


def token():
    """The token /auth/ wants (DIR/token), None when there is none."""
    try:
        with open(os.path.join(DIR, "token"), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def page_of(recs, query, key="page", first=1):
    size = int(query.get("size", "2"))
    n = int(query.get(key, str(first)))
    start = (n - first) * size
    return recs[start:start + size], start + size < len(recs), n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        want = token()
        got = self.headers.get("X-Api-Token")
        tok = "none" if got is None else ("ok" if got == want else "bad")
        with LOG_LOCK, open(os.path.join(DIR, "requests.log"), "a", encoding="utf-8") as f:
            f.write("%s %s %d token=%s\n" % (self.command, self.path, status, tok))
        return tok

    def send(self, status, body, ctype="application/json", headers=(), length=None):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.note(status)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        parts = [p for p in url.path.split("/") if p]
        try:
            self.route(parts, query)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def route(self, parts, query):
        while parts:
            head = parts[0]
            if head == "flaky":
                status, times = int(parts[1]), int(parts[2])
                with LOG_LOCK:
                    n = COUNTS.get(self.path, 0)
                    COUNTS[self.path] = n + 1
                if n < times:
                    hdrs = [("Retry-After", "1")] if status in (429, 503) else []
                    return self.send(status, '{"error": "try again"}', headers=hdrs)
                parts = parts[3:]
            elif head == "slow":
                time.sleep(float(parts[1]))
                parts = parts[2:]
            elif head == "failpage":
                if query.get("page") == parts[1]:
                    return self.send(500, '{"error": "internal"}')
                parts = parts[2:]
            elif head == "auth":
                if self.headers.get("X-Api-Token") != token():
                    return self.send(401, '{"error": "bad token"}')
                parts = parts[1:]
            else:
                break
        if not parts:
            return self.send(404, '{"error": "no such path"}')
        style, rest = parts[0], parts[1:]
        host = "%s://%s:%d" % ((SCHEME,) + self.server.server_address[:2])
        if style == "html":
            return self.send(200, "<!DOCTYPE html><html><body><h1>Bad gateway</h1></body></html>",
                             ctype="text/html")
        if style == "loop":
            self.note(302)
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if style == "echo":
            # a careless API that repeats the request, secrets and all
            return self.send(400, json.dumps({"error": "bad request", "url": self.path,
                                              "token": self.headers.get("X-Api-Token")}))
        if style in ("moved", "away"):
            # moved: to the same path under /next/ on this host; away: the
            # same on "localhost", another host name for the same server
            where = ("" if style == "moved" else "http://localhost:%d" % self.server.server_address[1])
            self.note(301)
            self.send_response(301)
            self.send_header("Location", where + "/next/" + "/".join(rest))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if style == "raw":
            # DIR/FILE byte for byte, as the body of a 200 JSON page
            with open(os.path.join(DIR, os.path.basename(rest[0])), "rb") as fh:
                body = fh.read()
            return self.send(200, body)
        if style == "big":
            return self.send(200, json.dumps([{"id": 1, "blob": "x" * int(rest[0])}]))
        if not rest:
            return self.send(404, '{"error": "no such path"}')
        prefix = "/" + "/".join(p for p in self.path.split("?")[0].split("/") if p)
        recs = records(rest[0], query)
        if style == "next":
            page, more, n = page_of(recs, query)
            nxt = None
            if more:
                q = dict(query, page=str(n + 1))
                nxt = host + prefix + "?" + urllib.parse.urlencode(q)
            return self.send(200, json.dumps({"data": page, "links": {"next": nxt}}))
        if style == "link":
            page, more, n = page_of(recs, query)
            hdrs = []
            if more:
                q = dict(query, page=str(n + 1))
                hdrs.append(("Link", '<%s?%s>; rel="next", <%s?page=1>; rel="first"'
                             % (prefix, urllib.parse.urlencode(q), prefix)))
            return self.send(200, json.dumps(page), headers=hdrs)
        if style == "pages":
            page, _, _ = page_of(recs, query)
            return self.send(200, json.dumps({"items": page}))
        if style == "cursor":
            after = int(query.get("after", "0"))
            size = int(query.get("size", "2"))
            page = recs[after:after + size]
            nxt = str(after + size) if after + size < len(recs) else None
            return self.send(200, json.dumps({"results": page, "meta": {"next_cursor": nxt}}))
        if style == "nested":
            wrapped = [{"id": r.get("id"), "attrs": {k: v for k, v in r.items() if k != "id"}}
                       for r in recs]
            return self.send(200, json.dumps({"data": wrapped}))
        if style == "truncated":
            body = json.dumps(recs).encode("utf-8")
            self.send(200, body[: len(body) // 2], length=len(body))
            self.close_connection = True
            return None
        if style == "cut":
            body = json.dumps({"data": recs}).encode("utf-8")
            self.note(200)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return None
        return self.send(404, '{"error": "no such path"}')


def watch_parent(srv, parent):
    while os.getppid() == parent:
        time.sleep(0.2)
    srv.shutdown()


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if len(sys.argv) > 3:
        # python3 tests/httpd.py DIR CERT KEY: HTTPS with that certificate
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    threading.Thread(target=watch_parent, args=(srv, os.getppid()), daemon=True).start()
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(DIR, "port"))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
