#!/usr/bin/env bash
# --all-netns cost (issue 27): the CPU of one sample with 50 namespaces of
# 2,000 sockets each (`snapshot --all-netns`) versus the same 100,000
# sockets in one namespace (`snapshot --netns`). Target: within 1.2x.
#
# Each namespace holds 1,000 loopback TCP connections (2,000 established
# sockets, both ends) made by one python3 process; the one-namespace case
# runs the same 50 processes in one namespace (a listener port each). CPU is
# user + system of the netlens process, from getrusage of the finished
# child: (run of COUNT samples - run of 1 sample) / (COUNT - 1), so start-up
# and the first owner scan (every fd once) cancel out. Everything lives in
# namespaces this script creates (loopback only) and is removed on exit.
# The --all-netns run also samples the host's and any other namespace on
# the machine (printed). Run as root.
#
# Most of the difference is the kernel's: a namespace's TCP dump walks the
# established hash, and that table is host-wide (every namespace's sockets)
# unless the namespace has its own, so 50 dumps walk 50 x 100,000 sockets.
# CHILD_EHASH=1 gives every bench namespace its own table (sized twice its
# sockets) through net.ipv4.tcp_child_ehash_entries, set in a parent
# namespace they are created from, as a container runtime can: then the
# difference left is netlens' own per-namespace work.
# Usage: [CHILD_EHASH=1] benches/scripts/bench-all-netns.sh [COUNT, default 6]
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT=${1:-6}
SPACES=50
PER_NS=1000            # connections per namespace: 2,000 sockets
PIDS=()
NAMES=()
HOLD=
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
if [ -z "${NETLENS:-}" ]; then
  cargo build --release --quiet
  NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")
fi

PARENT=
if [ "${CHILD_EHASH:-0}" = 1 ]; then
  PARENT=nsallbench-parent-$$
  NAMES+=("$PARENT")
  ip netns add "$PARENT"
fi
# add_ns NS SOCKETS: a namespace, with its own TCP hash of about twice
# SOCKETS buckets when CHILD_EHASH=1.
add_ns() {
  if [ -n "$PARENT" ]; then
    ip netns exec "$PARENT" sysctl -qw net.ipv4.tcp_child_ehash_entries=$((2 * $2))
    nsenter --net="/run/netns/$PARENT" ip netns add "$1"
  else
    ip netns add "$1"
  fi
  ip -n "$1" link set lo up
}

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in "${NAMES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -f "$HOLD"
}
trap cleanup EXIT

# hold NS PORT: 1,000 connections to 127.0.0.1:PORT inside NS, until killed
# (at most 600 s).
HOLD=$(mktemp /tmp/nsallbench-hold.XXXXXX.py)
cat > "$HOLD" <<'PY'
import socket, sys, time, resource
port, n = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (2 * n + 64, 2 * n + 64))
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port)); srv.listen(4096)
keep = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port)); s, _ = srv.accept()
    keep += [c, s]
time.sleep(600)
PY
hold() {
  ip netns exec "$1" python3 "$HOLD" "$2" "$PER_NS" &
  PIDS+=($!)
}

# cpu ARGS...: CPU seconds per sample of `netlens snapshot ARGS`.
cpu() {
  python3 - "$NETLENS" "$COUNT" "$@" <<'PY'
import resource, subprocess, sys
netlens, count, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def run(n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([netlens, "snapshot", "--json", "--no-capture", "--no-bpf",
                    "--interval", "1s", "--section", "interfaces", "--count", str(n)] + args,
                   stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
one, many = run(1), run(count)
print(f"{(many - one) / (count - 1):.4f}")
PY
}


# One namespace, 100,000 sockets.
ONE=nsallbench-one-$$
NAMES+=("$ONE")
add_ns "$ONE" $((SPACES * PER_NS * 2))
ip netns exec "$ONE" sysctl -qw net.ipv4.ip_local_port_range="30000 65000"
for i in $(seq 1 "$SPACES"); do hold "$ONE" $((20000 + i)); done
# established NS WANT: waits (at most 120 s) until NS holds WANT sockets.
established() {
  local tries=0
  until [ "$(ip netns exec "$1" ss -Htan state established | wc -l)" -ge "$2" ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 240 ] || { echo "$1: the holders did not connect" >&2; exit 1; }
    sleep 0.5
  done
}
established "$ONE" $((SPACES * PER_NS * 2))
one=$(cpu --all-netns)
for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
PIDS=()
ip netns del "$ONE"

# 50 namespaces, 2,000 sockets each.
MANY=()
for i in $(seq 1 "$SPACES"); do
  ns=nsallbench-$$-$i
  NAMES+=("$ns")
  MANY+=("$ns")
  add_ns "$ns" $((PER_NS * 2))
  hold "$ns" 20000
done
for ns in "${MANY[@]}"; do
  established "$ns" $((PER_NS * 2))
done
others=$("$NETLENS" snapshot --json --all-netns --no-capture --no-bpf --count 1 --interval 200ms --section interfaces \
  | python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(len(d["namespaces"]))')
many=$(cpu --all-netns)

echo "1 namespace x $((SPACES * PER_NS * 2)) sockets (--all-netns, $((others - SPACES + 1)) namespaces sampled): ${one} s CPU per sample"
echo "$SPACES namespaces x $((PER_NS * 2)) sockets (--all-netns, $others namespaces sampled): ${many} s CPU per sample"
python3 -c "print(f'ratio: {$many / $one:.2f}x (target 1.2x)')"
