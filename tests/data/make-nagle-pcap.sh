#!/usr/bin/env bash
# Records tests/data/nagle-stall.pcap from real traffic: the classic Nagle +
# delayed-ACK stall between two network namespaces this script creates
# (198.18.9.1 client, 198.18.9.2 server, on a veth pair), captured by
# `netlens capture -w` on the server's end. The server answers each
# 32-byte request with a 20-byte header and a 30-byte body written
# separately, without TCP_NODELAY; the client sends 5 requests back to back.
# The UI snapshot tests of the flow screen render this file. Needs root and
# python3; removes what it creates.
# Usage: tests/data/make-nagle-pcap.sh [OUT, default tests/data/nagle-stall.pcap]
# (NETLENS=path/to/netlens uses a build already made.)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-tests/data/nagle-stall.pcap}
. tests/data/netns-pair.sh

"$NETLENS" --netns "$B" capture -i veth-b -f "tcp port 9001" -w "$OUT" --duration 20s 2>/dev/null &
CAP=$!
sleep 0.5
ip netns exec "$B" timeout 10 python3 -c '
import socket
l = socket.socket(); l.bind(("198.18.9.2", 9001)); l.listen()
c, _ = l.accept()
for _ in range(5):
    c.recv(32, socket.MSG_WAITALL)
    c.send(b"h" * 20)
    c.send(b"b" * 30)
c.recv(1)
c.close()
' &
SERVER=$!
sleep 0.3
ip netns exec "$A" timeout 10 python3 -c '
import socket
c = socket.create_connection(("198.18.9.2", 9001), timeout=5)
for _ in range(5):
    c.sendall(b"q" * 32)
    got = 0
    while got < 50:
        got += len(c.recv(50 - got))
c.close()
'
wait "$SERVER"
sleep 0.3
kill -TERM "$CAP"
wait "$CAP" || true
CAP=
echo "$OUT: $("$NETLENS" read "$OUT" | wc -l) packets"
"$NETLENS" read "$OUT" --flows
