#!/usr/bin/env python3
"""Light, bounded traffic for bench-record-day.sh: CONNS loopback TCP
connections to a local echo server, each sending a 64-byte message every
PERIOD seconds for SECONDS seconds (so about 2 * CONNS / PERIOD packets/s
each way with their ACKs), then exit. Loopback only (127.0.0.1 of the
namespace it runs in).
Usage: rday-traffic.py PORT CONNS PERIOD SECONDS"""
import selectors
import socket
import sys
import time


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    port, conns = int(sys.argv[1]), int(sys.argv[2])
    period, seconds = float(sys.argv[3]), float(sys.argv[4])
    if not (0 < conns <= 1000 and 0.001 <= period and 0 < seconds <= 3600):
        sys.exit("CONNS 1..1000, PERIOD >= 0.001, SECONDS 1..3600")
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(conns)
    clients, served = [], []
    for _ in range(conns):
        c = socket.create_connection(("127.0.0.1", port))
        s, _ = server.accept()
        clients.append(c)
        served.append(s)
    sel = selectors.DefaultSelector()
    for s in served + clients:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    echo = set(served)
    message = b"x" * 64
    end = time.monotonic() + seconds
    next_send = time.monotonic()
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_send:
            for c in clients:
                try:
                    c.send(message)
                except BlockingIOError:
                    pass
            next_send += period
        for key, _ in sel.select(timeout=max(0.0, next_send - time.monotonic())):
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            if data and key.fileobj in echo:
                try:
                    key.fileobj.send(data)
                except BlockingIOError:
                    pass


if __name__ == "__main__":
    main()
