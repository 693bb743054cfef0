#!/usr/bin/env python3
"""A small HTTP server for the SyncTests (Python 3 standard library only).

Binds 127.0.0.1 only, on a free port, and prints that port as its first line of stdout.
Exits by itself after --lifetime seconds, or as soon as its stdin closes (so it never outlives
the test process that started it).

Routes (GET):
  /<name>                          a file from --root, with ETag and Last-Modified; honours
                                   If-None-Match and If-Modified-Since with 304
  /count/<name>                    the same file (every path's hits are counted anyway)
  /status/<code>                   that status, small body; ?retry-after=V adds Retry-After: V
  /status/<code>-then-200/<name>   <code> on the first request for <name>, then the file;
                                   e.g. /status/500-then-200/feed.json,
                                   /status/429-then-200/feed.json?retry-after=1
  /truncated                       Content-Length: 1000, sends 10 bytes, closes
  /slow?seconds=5                  headers and 1 byte, stalls, then the rest (at most 600 s)
  /slow?seconds=5&dribble=0.2      one byte every 0.2 s for 5 s (never idle for long)
  /redirect-loop                   302 to itself
  /redirect-to/<url-encoded URL>   302 (or ?status=301/303/307/308) to that URL
  /big?bytes=N                     N bytes with Content-Length; &chunked=1 for chunked encoding;
                                   &pace=0.01 waits that long between 64 KiB blocks; &block=1
                                   sends blocks (and chunks) of that many bytes (1 to 65536)
  /headers-echo                    the request headers as JSON (names lowercased)
  /hits                            JSON {path: hits}, not counting /hits and /bytes-sent
  /bytes-sent                      JSON {path: body bytes written}, recorded once a /big ends
"""

import argparse
import email.utils
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

MAX_WAIT = 600                # seconds: the longest any scripted stall lasts (/slow)
MAX_BIG = 1024 * 1024 * 1024  # bytes: the largest /big body
QUIET_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)

lock = threading.Lock()
hits = {}          # path -> requests seen
bytes_sent = {}    # path -> body bytes written by the last /big
failed_once = set()  # (code, name) already answered with <code>


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FeedServer/1"
    timeout = 15  # a client that stops talking cannot hold a thread forever

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        path, query = url.path, {k: v[-1] for k, v in parse_qs(url.query).items()}
        if path not in ("/hits", "/bytes-sent"):
            with lock:
                hits[path] = hits.get(path, 0) + 1
        try:
            self.route(path, query)
        except QUIET_ERRORS:
            self.close_connection = True
        except ValueError:  # a malformed number in the path or query
            self.send_status(400)

    def route(self, path, query):
        parts = path.strip("/").split("/", 2)
        head = parts[0]
        if path == "/hits":
            with lock:
                return self.send_json(dict(hits))
        if path == "/bytes-sent":
            with lock:
                return self.send_json(dict(bytes_sent))
        if path == "/headers-echo":
            return self.send_json({k.lower(): v for k, v in self.headers.items()})
        if path == "/truncated":
            return self.truncated()
        if path == "/slow":
            return self.slow(float(query.get("seconds", "5")), query.get("dribble"))
        if path == "/redirect-loop":
            return self.redirect("/redirect-loop", 302)
        if head == "redirect-to" and len(parts) > 1:
            target = unquote(path[len("/redirect-to/"):])
            return self.redirect(target, int(query.get("status", "302")))
        if path == "/big":
            pace = min(max(float(query.get("pace", "0")), 0), 1)
            block = min(max(int(query.get("block", "65536")), 1), 65536)
            return self.big(int(query.get("bytes", "0")), query.get("chunked") == "1", pace, block)
        if head == "count" and len(parts) > 1:
            return self.serve_file(path[len("/count/"):])
        if head == "status" and len(parts) > 1:
            code = parts[1]
            if code.endswith("-then-200") and len(parts) > 2:
                key = (code, parts[2])
                with lock:
                    first = key not in failed_once
                    failed_once.add(key)
                if not first:
                    return self.serve_file(parts[2])
                code = code[: -len("-then-200")]
            return self.send_status(int(code), query.get("retry-after"))
        return self.serve_file(path.lstrip("/"))

    # Responses

    def send_body(self, status, body, content_type="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, value):
        self.send_body(200, json.dumps(value, sort_keys=True).encode(), "application/json")

    def send_status(self, code, retry_after=None):
        headers = [("Retry-After", retry_after)] if retry_after is not None else []
        self.send_body(code, f"status {code}\n".encode(), headers=headers)

    def serve_file(self, name):
        root = self.server.root
        file = os.path.realpath(os.path.join(root, unquote(name)))
        if not file.startswith(root + os.sep) or not os.path.isfile(file):
            return self.send_status(404)
        with open(file, "rb") as f:
            body = f.read()
        mtime = int(os.path.getmtime(file))
        etag = '"' + hashlib.sha256(body).hexdigest() + '"'
        validators = [("ETag", etag), ("Last-Modified", email.utils.formatdate(mtime, usegmt=True))]
        if self.not_modified(etag, mtime):
            self.send_response(304)
            for header in validators:
                self.send_header(*header)
            self.end_headers()
            return
        kind = "application/json" if file.endswith(".json") else "application/octet-stream"
        self.send_body(200, body, kind, validators)

    def not_modified(self, etag, mtime):
        if_none_match = self.headers.get("If-None-Match")
        if if_none_match is not None:  # takes precedence over If-Modified-Since
            tags = [tag.strip() for tag in if_none_match.split(",")]
            return "*" in tags or etag in tags or "W/" + etag in tags
        if_modified_since = self.headers.get("If-Modified-Since")
        if if_modified_since:
            try:
                since = email.utils.parsedate_to_datetime(if_modified_since).timestamp()
            except (TypeError, ValueError):
                return False
            return mtime <= since
        return False

    def redirect(self, location, status):
        self.send_body(status, b"", headers=[("Location", location)])

    def truncated(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"version"')  # 10 bytes
        self.wfile.flush()
        self.close_connection = True

    def slow(self, seconds, dribble):
        seconds = min(max(seconds, 0), MAX_WAIT)
        if dribble is not None:
            interval = min(max(float(dribble), 0.01), MAX_WAIT)
            count = max(int(seconds / interval), 1)
        else:
            interval, count = seconds, 2
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(count))
        self.end_headers()
        self.wfile.write(b"x")
        self.wfile.flush()
        for _ in range(count - 1):
            time.sleep(interval)
            self.wfile.write(b"x")
            self.wfile.flush()

    def big(self, size, chunked, pace, block_size=65536):
        size = min(max(size, 0), MAX_BIG)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        block = b"x" * block_size
        sent = 0
        # Small blocks are gathered into writes of 64 KiB: one system call per 1-byte chunk
        # took the server seconds.
        pending = bytearray()
        try:
            while sent < size:
                data = block[: size - sent]
                pending += b"%x\r\n%s\r\n" % (len(data), data) if chunked else data
                sent += len(data)
                if len(pending) >= 65536 or pace:
                    self.wfile.write(pending)
                    pending.clear()
                if pace:
                    self.wfile.flush()
                    time.sleep(pace)
            if chunked:
                pending += b"0\r\n\r\n"
            self.wfile.write(pending)
            self.wfile.flush()
        finally:
            with lock:
                bytes_sent["/big"] = sent


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], QUIET_ERRORS):
            super().handle_error(request, client_address)


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="directory whose files are served")
    # A backstop only (stdin closing or a kill ends it first), past the longest stall, so that a
    # client that waits for one is not let go by the server's end.
    parser.add_argument("--lifetime", type=float, default=900, help="seconds before the server exits")
    args = parser.parse_args()

    server = Server(("127.0.0.1", 0), Handler)
    server.root = os.path.realpath(args.root)
    print(server.server_address[1], flush=True)

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    timer = threading.Timer(args.lifetime, os._exit, args=(0,))
    timer.daemon = True
    timer.start()
    server.serve_forever()


if __name__ == "__main__":
    main()
