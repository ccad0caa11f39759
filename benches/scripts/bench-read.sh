#!/bin/bash
# netlens read vs tcpdump -n -r on the same pcap, made from real traffic:
# `netlens capture` on lo in a namespace this script creates, while a
# bounded UDP + TCP generator (N packets, at most 30 s) runs there. Needs root,
# tcpdump and python3. Usage: benches/scripts/bench-read.sh [PACKETS]
set -euo pipefail
N=${1:-500000}
BIN=${NETLENS:-target/release/netlens}
NS=netlens-bench-read-$$
PCAP=$(mktemp /tmp/netlens-bench-XXXX.pcap)
cleanup() { [ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null || true; ip netns del "$NS" 2>/dev/null || true; rm -f "$PCAP"; }
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
"$BIN" --netns "$NS" capture -i lo -w "$PCAP" -c "$N" 2>/dev/null &
CAP=$!
sleep 0.5
ip netns exec "$NS" timeout 30 python3 - "$N" <<'PY'
import socket, sys
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 9100))
r.setblocking(False)
# TCP too, so the per-flow TCP analysis is part of what `read` pays for:
# small segments with TCP_NODELAY, each one a packet plus the ACKs.
ls = socket.socket(); ls.bind(("127.0.0.1", 9200)); ls.listen()
t = socket.create_connection(("127.0.0.1", 9200))
t.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
a, _ = ls.accept(); a.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n + 1000):
    if i % 2:
        t.send(b"y" * (1 + i % 300))
    else:
        s.sendto(b"x" * (i % 200), ("127.0.0.1", 9100 + i % 4))
    try:
        while True: r.recv(2048)
    except BlockingIOError: pass
    try:
        while True: a.recv(65536)
    except BlockingIOError: pass
PY
wait "$CAP" || true
CAP=
echo "pcap: $(tcpdump -r "$PCAP" 2>/dev/null | wc -l) packets, $(du -h "$PCAP" | cut -f1)"
t() { local s=$(date +%s.%N); "$@" > /dev/null 2>&1; echo "$(date +%s.%N) - $s" | bc; }
for i in 1 2 3; do
  echo "run $i: netlens read $(t "$BIN" read "$PCAP") s | tcpdump -n -r $(t tcpdump -n -r "$PCAP") s | netlens read --flows $(t "$BIN" read --flows "$PCAP") s"
done
