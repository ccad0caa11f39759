#!/usr/bin/env bash
# `netlens export` under abuse (issue 25), on loopback (127.0.0.1 only):
# holds IDLE connections that send nothing and SLOW ones that send a request
# one byte per second (slowloris), then times SCRAPES scrapes of /metrics one
# after another and prints p50/p99/max latency, how many connections the
# exporter holds (ss), and its RSS before and during the abuse.
# Needs: python3.
# Usage: benches/scripts/bench-export-abuse.sh   (IDLE=1000 SLOW=200 SCRAPES=100)
set -euo pipefail
cd "$(dirname "$0")/../.."
IDLE=${IDLE:-1000}
SLOW=${SLOW:-200}
SCRAPES=${SCRAPES:-100}
cargo build --release --quiet
NETLENS=${CARGO_TARGET_DIR:-target}/release/netlens
ulimit -n "$(ulimit -Hn)"

OUT=$(mktemp)
"$NETLENS" export --listen 127.0.0.1:0 >"$OUT" &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$OUT"' EXIT
for _ in $(seq 200); do grep -q http:// "$OUT" && break; sleep 0.05; done
ADDR=$(sed -n 's|.*http://\([^/]*\)/metrics.*|\1|p' "$OUT")
[ -n "$ADDR" ] || { echo "netlens export did not start" >&2; exit 1; }

python3 - "$ADDR" "$PID" "$IDLE" "$SLOW" "$SCRAPES" <<'PY'
import socket, subprocess, sys, threading, time
host, port = sys.argv[1].rsplit(":", 1)
pid, idle_n, slow_n, scrapes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
addr = (host, int(port))

def rss_kib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def scrape():
    start = time.perf_counter()
    with socket.create_connection(addr, timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:40]
    return (time.perf_counter() - start) * 1000

def held():
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True).stdout
    return len(out.splitlines())

def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

def run(label):
    times = [scrape() for _ in range(scrapes)]
    print(f"{label:<38} scrape ms p50 {percentile(times, 50):7.2f}  p99 {percentile(times, 99):7.2f}"
          f"  max {max(times):7.2f}   exporter holds {held():5d} conns, RSS {rss_kib()} KiB")

scrape()
run("no abuse:")
idle = [socket.create_connection(addr) for _ in range(idle_n)]
slow = [socket.create_connection(addr) for _ in range(slow_n)]
stop = False
def drip():
    request = b"GET /metrics HTTP/1.1\r\nX-a: "
    i = 0
    while not stop:
        byte = request[i:i + 1] or b"a"
        i += 1
        for s in slow:
            try:
                s.send(byte)
            except OSError:
                pass
        time.sleep(1)
threading.Thread(target=drip, daemon=True).start()
time.sleep(0.5)
run(f"{idle_n} idle + {slow_n} slowloris:")
time.sleep(5)
run("6 s later (all got 408 at 5 s):")
stop = True
PY
