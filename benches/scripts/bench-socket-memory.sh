#!/usr/bin/env bash
# Where the live Sockets tab's memory goes, per socket: run inside
# scale-sockets.sh (which sets $NS), e.g. with 100,000 sockets:
#   NS=rday-mem benches/scripts/scale-sockets.sh 50000 0 -- benches/scripts/bench-socket-memory.sh
# 1. the live view (tmux 200x50, --no-capture --no-bpf, 1 s) alone: VmRSS
#    after WINDOW seconds, per socket;
# 2. the same under heaptrack: peak heap, and the call sites holding the
#    most at the peak (heaptrack_print), to name the owners of the bytes.
# Needs tmux and heaptrack (apt-get install heaptrack).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NS:?run me inside scale-sockets.sh}"
WINDOW=${WINDOW:-20}
BIN=$(realpath "${BIN:-target/release/netlens}")
SESSION=rday-mem-$$
OUT=$(mktemp -d)
cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; rm -rf "$OUT"; }
trap cleanup EXIT
command -v heaptrack >/dev/null || { echo "missing heaptrack: apt-get install heaptrack" >&2; exit 1; }
sockets=$(ip netns exec "$NS" ss -tanH | wc -l)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $sockets TCP sockets in $NS"
live() { # the live view under $1 (a wrapper or nothing) for WINDOW s; prints its RSS
  tmux new-session -d -s "$SESSION" -x 200 -y 50 "$1 $BIN --netns $NS --tab sockets --no-capture --no-bpf --interval 1s"
  sleep "$WINDOW"
  local pid; pid=$(pgrep -f "^$BIN --netns $NS" | head -1)
  local rss; rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  local hwm; hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  echo "RSS $((rss / 1024)) MB (HWM $((hwm / 1024)) MB): $((rss * 1024 / sockets)) B per socket"
  tmux send-keys -t "$SESSION" q
  for _ in $(seq 1 200); do tmux has-session -t "$SESSION" 2>/dev/null || break; sleep 0.1; done
  tmux kill-session -t "$SESSION" 2>/dev/null || true
}
echo "live view: $(live "")"
echo "under heaptrack: $(live "heaptrack -o $OUT/heap")"
for _ in $(seq 1 100); do ls "$OUT"/heap*.zst >/dev/null 2>&1 && break; sleep 0.2; done
sleep 2
heaptrack_print "$OUT"/heap*.zst --print-peaks 1 --print-allocators 0 --print-leaks 0 \
  --print-temporary 0 --peak-limit 12 --sub-peak-limit 3 2>/dev/null \
  | grep -E '^(PEAK|peak heap|total|calls|[0-9.]+[KMG]?B? peak|  *[0-9.]+[KMG]B)|at src|in .*netlens' | head -80 || true
heaptrack_print "$OUT"/heap*.zst --print-peaks 0 --print-allocators 0 --print-leaks 0 --print-temporary 0 2>/dev/null | tail -8
