"""A hostile HTTP server for the attack tests, run as its own process.
Binds the address given as its first argument (default 127.0.0.1), prints
its port, then serves until killed. Routes:

/data.csv             a small text body
/redirect?to=URL      302 to URL (any scheme, any spelling)
/gzip-bomb/N          a gzip body of N MiB of zeros, a few KiB on the wire
/headers/N            200 with N KiB of header lines before the body
/slow-body?secs=S     half the body, a pause of S seconds, the rest
/bytes/N              N bytes
/hits                 how often each path was asked
"""

import collections
import functools
import gzip
import http.server
import sys
import time
import urllib.parse

HITS = collections.Counter()


@functools.lru_cache(maxsize=2)
def gzip_of_zeros(mib):
    return gzip.compress(bytes(mib << 20), compresslevel=9)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def _send(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _headers(self, kib):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        line = "a" * 1000
        try:
            for i in range(kib):
                self.send_header(f"X-Filler-{i}", line)
            self.end_headers()
            self.wfile.write(b"after the headers\n")
        except OSError:
            pass  # the client gave up, as it should

    def _slow_body(self, seconds):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "12")
        self.end_headers()
        self.wfile.write(b"first ")
        self.wfile.flush()
        time.sleep(seconds)
        self.wfile.write(b"second")

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        HITS[url.path] += 1
        parts = url.path.strip("/").split("/")
        if url.path == "/data.csv":
            self._send(200, b"a,b\n1,2\n", "text/csv")
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif parts[0] == "gzip-bomb" and len(parts) == 2:
            body = gzip_of_zeros(int(parts[1]))
            self._send(200, body, "text/plain", [("Content-Encoding", "gzip")])
        elif parts[0] == "headers" and len(parts) == 2:
            self._headers(int(parts[1]))
        elif parts[0] == "bytes" and len(parts) == 2:
            self._send(200, b"x" * int(parts[1]), "application/octet-stream")
        elif url.path == "/slow-body":
            self._slow_body(float(query["secs"][0]))
        elif url.path == "/hits":
            body = "\n".join(f"{k} {v}" for k, v in sorted(HITS.items())).encode()
            self._send(200, body, "text/plain")
        else:
            self._send(404, b"no such page", "text/plain")


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    server = http.server.ThreadingHTTPServer((address, 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
