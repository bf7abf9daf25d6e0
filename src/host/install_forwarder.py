"""The install sandbox's one way out (issue 30 part 2), started by the host
inside the sandbox before the installer: the sandbox has its own network
namespace (loopback only), so this listens on 127.0.0.1 there and relays
each connection to the host's install proxy through the unix socket bound
into the sandbox. The proxy decides what may be reached; this only carries
bytes. Then it runs the installer with the proxy's URL in place of every
argument equal to TOKEN (and in the usual proxy variables) and exits with
the installer's status. The host passes TOKEN: it is written in one place,
the host's kInstallProxyToken.

Usage: python3 -I install_forwarder.py SOCKET TOKEN -- INSTALLER ARGS..."""

import os
import socket
import subprocess
import sys
import threading


def carry(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay(client, proxy_path):
    with client, socket.socket(socket.AF_UNIX) as upstream:
        try:
            upstream.connect(proxy_path)
        except OSError:
            return
        inward = threading.Thread(target=carry, args=(upstream, client), daemon=True)
        inward.start()
        carry(client, upstream)
        inward.join()


def serve(listener, proxy_path):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=relay, args=(client, proxy_path), daemon=True).start()


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--" or not sys.argv[2]:
        sys.exit(__doc__)
    proxy_path, token, installer = sys.argv[1], sys.argv[2], sys.argv[4:]
    listener = socket.create_server(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    threading.Thread(target=serve, args=(listener, proxy_path), daemon=True).start()
    env = dict(os.environ)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        env[name] = url
    argv = [url if arg == token else arg for arg in installer]
    sys.exit(subprocess.call(argv, env=env))


if __name__ == "__main__":
    main()
