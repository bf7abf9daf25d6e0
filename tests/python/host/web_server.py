"""A small HTTP server on 127.0.0.1 for the web tests, run as its own
process (the host's fetch must not depend on this interpreter's GIL).
Prints its port, then serves until killed. Routes:

/page.html  an HTML page        /data.csv  text          /image.png  binary
/bytes/N    N bytes, Content-Length     /stream/N  N bytes, no length
/slow       headers, then a long pause  /missing   404
/redirect?to=URL  302 to URL            /hits      how often each path was asked
/trickle    1 KiB every 50 ms until the client leaves (then /trickle/left is
            counted), for at most 10 minutes
"""

import collections
import http.server
import sys
import time
import urllib.parse

PAGE = (
    "<!doctype html><html><head><title>t</title><script>var x = 1;</script></head><body>"
    "<h1>Hemoglobin</h1><p>See <a href='https://www.uniprot.org/P69905'>P69905</a>"
    " and <b>more</b>.</p><p>" + "lorem ipsum " * 400 + "</p></body></html>"
)
HITS = collections.Counter()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def _send(self, status, body, content_type, length=True):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        HITS[url.path] += 1
        parts = url.path.strip("/").split("/")
        if url.path == "/page.html":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif url.path == "/data.csv":
            self._send(200, b"a,b\n1,2\n", "text/csv")
        elif url.path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
        elif parts[0] in ("bytes", "stream") and len(parts) == 2:
            body = b"x" * int(parts[1])
            self._send(200, body, "application/octet-stream", length=parts[0] == "bytes")
        elif url.path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"first\n")
            self.wfile.flush()
            time.sleep(30)
        elif url.path == "/trickle":
            self._trickle()
        elif url.path == "/redirect":
            target = urllib.parse.parse_qs(url.query)["to"][0]
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/hits":
            body = "\n".join(f"{k} {v}" for k, v in sorted(HITS.items())).encode()
            self._send(200, body, "text/plain")
        else:
            self._send(404, b"no such page", "text/plain")

    def _trickle(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        try:
            for _ in range(12000):
                self.wfile.write(b"t" * 1024)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            HITS["/trickle/left"] += 1


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
