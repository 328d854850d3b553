#!/usr/bin/env python3
"""The load of bench/tcp.sh, run by the kernel client (and, for the kernel reference, the
kernel server). The same program drives dpstack's built-in services and the kernel server,
so the ratio compares the servers, not the clients.

  tcp_load.py stream HOST PORT SECONDS   send 64 KiB writes for SECONDS; print MB/s
  tcp_load.py cps HOST PORT SECONDS      connect, 1-byte echo, close, repeatedly; print conn/s
  tcp_load.py serve PORT                 kernel reference server: echo when the client sends
                                         one byte and waits, discard otherwise (one thread per
                                         connection)
"""
import socket
import sys
import threading
import time


def stream(host, port, secs):
    buf = bytes(65536)
    s = socket.create_connection((host, port))
    sent = 0
    end = time.monotonic() + secs
    start = time.monotonic()
    while time.monotonic() < end:
        sent += s.send(buf)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the server's FIN: everything was received
    elapsed = time.monotonic() - start
    s.close()
    print(f"{sent / elapsed / 1e6:.1f}")


def cps(host, port, secs):
    n = 0
    end = time.monotonic() + secs
    start = time.monotonic()
    while time.monotonic() < end:
        s = socket.create_connection((host, port))
        s.sendall(b"x")
        if s.recv(1) != b"x":
            raise SystemExit("echo mismatch")
        s.close()
        n += 1
    print(f"{n / (time.monotonic() - start):.0f}")


def handle(c):
    with c:
        first = c.recv(65536)
        if first == b"x":
            c.sendall(first)
        while c.recv(1 << 20):
            pass


def serve(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1024)
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stream":
        stream(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "cps":
        cps(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "serve":
        serve(int(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
