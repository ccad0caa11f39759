#!/usr/bin/env bash
# Side by side at 50k established TCP sockets: `ss -tan` versus one full
# netlens sample, plus the criterion bench (frame time, RSS). Run as root.
#
# The sockets live in a throw-away namespace on its loopback: 25,000
# connections (50,000 established sockets, both ends) held by 5 processes of
# 10,000 fds each (a process here may hold at most 20,000). Everything is
# removed on exit. NETLENS_BENCH_PROCS=10 holds 100k sockets; the
# criterion run is limited to NETLENS_BENCH_FILTER (a regex, default all).
set -euo pipefail
cd "$(dirname "$0")/../.."
NS=netlens-bench-sockets-$$
PROCS=${NETLENS_BENCH_PROCS:-5}
PER_PROC=5000          # connections per process: 2 fds each
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"

for i in $(seq 1 "$PROCS"); do
  port=$((20000 + i))
  ip netns exec "$NS" python3 - "$port" "$PER_PROC" <<'PY' &
import socket, sys, time, resource
port, n = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (2 * n + 64, 2 * n + 64))
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port)); srv.listen(4096)
keep = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port)); s, _ = srv.accept()
    keep += [c, s]
print("ready", flush=True)
time.sleep(600)   # bounded: the script kills it long before
PY
  PIDS+=($!)
done

echo "waiting for $((PROCS * PER_PROC * 2)) established sockets…"
for _ in $(seq 1 120); do
  n=$(ip netns exec "$NS" ss -tanH state established | wc -l)
  [ "$n" -ge $((PROCS * PER_PROC * 2)) ] && break
  sleep 1
done
echo "established: $n"

echo "== ss -tan (10 runs)"
start=$(date +%s.%N)
for _ in $(seq 10); do ip netns exec "$NS" ss -tan >/dev/null; done
end=$(date +%s.%N)
echo "ss -tan: $(echo "($end - $start) * 100" | bc -l | cut -c1-6) ms per run"

echo "== ss -tanp (3 runs, with owners like netlens)"
start=$(date +%s.%N)
for _ in $(seq 3); do ip netns exec "$NS" ss -tanp >/dev/null; done
end=$(date +%s.%N)
echo "ss -tanp: $(echo "($end - $start) * 1000 / 3" | bc -l | cut -c1-6) ms per run"

if command -v hyperfine >/dev/null; then
  hyperfine -w 2 "ip netns exec $NS ss -tan"
fi

echo "== netlens: full sample (criterion), frame, RSS"
ip netns exec "$NS" cargo bench --bench sockets -- --noplot ${NETLENS_BENCH_FILTER:-} 2>&1 |
  grep -E "RSS|time:|collect|frame|findings"

echo "== netlens snapshot, max RSS of the process"
cargo build --release -q
/usr/bin/time -f "netlens snapshot --count 3: max RSS %M kB, %e s" \
  target/release/netlens snapshot --netns "$NS" --json --count 3 --interval 500ms >/dev/null
