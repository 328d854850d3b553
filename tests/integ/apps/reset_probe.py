"""What a program sees of a TCP socket whose connection ended by a reset: run once on a kernel
socket that got an RST, once through the preload shim on a stack socket whose daemon was
killed, so that a test can say both print the same.

    reset_probe.py MODE IP PORT

MODE `recv-first`: connects, prints "connected", waits for a line on stdin (the test resets
the connection meanwhile), then prints one line per step: poll, epoll, recv, poll, epoll,
recv, SO_ERROR, send with MSG_NOSIGNAL, send without it (and whether SIGPIPE came); each
epoll line is one wait of a level-triggered instance made before the reset, the last ("new
epoll") of one made after it.
MODE `soerror-first`: the same, with SO_ERROR read before anything else.
MODE `connecting`: a non-blocking connect (its result is the first line), then after the
line on stdin: poll, SO_ERROR, SO_ERROR, recv, send with MSG_NOSIGNAL.
MODE `udp`: a connected UDP socket, which no reset reaches: after the line on stdin (a
fourth argument `shutdown`: it shuts the socket down both ways itself first) poll, epoll
twice, a non-blocking recv, a blocking one, SO_ERROR, send (and whether SIGPIPE came)."""

import errno
import select
import signal
import socket
import sys

POLL_NAMES = [("IN", select.POLLIN), ("PRI", select.POLLPRI), ("OUT", select.POLLOUT),
              ("ERR", select.POLLERR), ("HUP", select.POLLHUP), ("RDHUP", select.POLLRDHUP)]
EPOLL_NAMES = [("IN", select.EPOLLIN), ("PRI", select.EPOLLPRI), ("OUT", select.EPOLLOUT),
               ("ERR", select.EPOLLERR), ("HUP", select.EPOLLHUP),
               ("RDHUP", select.EPOLLRDHUP)]


def names(mask, table):
    return "|".join(n for n, bit in table if mask & bit) or "0"


def outcome(call):
    try:
        r = call()
    except OSError as e:
        return errno.errorcode[e.errno]
    return "%d" % (len(r) if isinstance(r, bytes) else r)


def poll_once(s):
    p = select.poll()
    p.register(s, select.POLLIN | select.POLLOUT | select.POLLRDHUP)
    ev = p.poll(2000)
    return names(ev[0][1] if ev else 0, POLL_NAMES)


def epoll_once(ep):
    """One wait of a level-triggered instance that holds the socket: it reports the same
    again and again while the socket stays so."""
    ev = ep.poll(2)
    return names(ev[0][1] if ev else 0, EPOLL_NAMES)


def new_epoll_once(s):
    """One wait of an instance made now (after the reset), level-triggered."""
    with select.epoll() as ep:
        ep.register(s, select.EPOLLIN | select.EPOLLOUT | select.EPOLLRDHUP)
        return epoll_once(ep)


def so_error(s):
    return errno.errorcode.get(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), "0")


def send_signalling(s):
    """send without MSG_NOSIGNAL, SIGPIPE blocked: a SIGPIPE it raised stays pending."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGPIPE])
    r = outcome(lambda: s.send(b"x"))
    raised = signal.SIGPIPE in signal.sigpending()
    if raised:
        signal.sigwait([signal.SIGPIPE])
    return "%s sigpipe %s" % (r, "yes" if raised else "no")


def say(*words):
    print(*words, flush=True)


def connected(kind, ip, port):
    """A socket of kind connected to ip:port and a level-triggered epoll instance watching
    it, made before the line on stdin, which this waits for."""
    s = socket.socket(socket.AF_INET, kind)
    s.connect((ip, port))
    ep = select.epoll()
    ep.register(s, select.EPOLLIN | select.EPOLLOUT | select.EPOLLRDHUP)
    say("connected")
    sys.stdin.readline()
    return s, ep


def say_readiness(s, ep):
    say("poll", poll_once(s))
    say("epoll", epoll_once(ep))
    say("epoll", epoll_once(ep))


def udp(ip, port, shut):
    s, ep = connected(socket.SOCK_DGRAM, ip, port)
    if shut:
        s.shutdown(socket.SHUT_RDWR)
    say_readiness(s, ep)
    say("recv", outcome(lambda: s.recv(16, socket.MSG_DONTWAIT)))
    say("recv", outcome(lambda: s.recv(16)))
    say("SO_ERROR", so_error(s))
    say("send", send_signalling(s))


def main():
    mode, ip, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if mode == "udp":
        udp(ip, port, sys.argv[4:] == ["shutdown"])
        return
    if mode == "connecting":
        s = socket.socket()
        s.setblocking(False)
        say("connect", errno.errorcode.get(s.connect_ex((ip, port)), "0"))
        sys.stdin.readline()
        say("poll", poll_once(s))
        say("SO_ERROR", so_error(s))
        say("SO_ERROR", so_error(s))
        say("recv", outcome(lambda: s.recv(16)))
        say("send", outcome(lambda: s.send(b"x", socket.MSG_NOSIGNAL)))
        return
    s, ep = connected(socket.SOCK_STREAM, ip, port)
    if mode == "soerror-first":
        say("SO_ERROR", so_error(s))
    for _ in range(2):
        say_readiness(s, ep)
        say("recv", outcome(lambda: s.recv(16)))
    say("SO_ERROR", so_error(s))
    say("send", outcome(lambda: s.send(b"x", socket.MSG_NOSIGNAL)))
    say("send", send_signalling(s))
    say("new epoll", new_epoll_once(s))


main()
