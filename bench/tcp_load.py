#!/usr/bin/env python3
"""The load of bench/tcp.sh, run by the kernel client. The same program drives dpstack's
built-in services and the kernel reference server, so the ratio compares the servers.

  tcp_load.py stream HOST PORT SECONDS   send 64 KiB writes for SECONDS; print MB/s
  tcp_load.py cps HOST PORT SECONDS      connect, 1-byte echo, close, repeatedly; print conn/s
"""
import socket
import sys
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


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stream":
        stream(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "cps":
        cps(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
