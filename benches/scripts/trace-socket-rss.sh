#!/usr/bin/env bash
# The live Sockets tab's resident memory over time: run inside
# scale-sockets.sh (which sets $NS), e.g. at 1,000,000 sockets:
#   NS=scl-mem benches/scripts/scale-sockets.sh 500000 0 -- benches/scripts/trace-socket-rss.sh
# Starts `netlens --tab sockets --no-capture --no-bpf --interval 1s` in a
# tmux server of its own (200x50) and prints VmRSS and VmHWM every STEP
# seconds for WINDOW seconds (the first sample, owners included, takes
# about a minute at a million sockets), then smaps_rollup's totals.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NS:?run me inside scale-sockets.sh}"
WINDOW=${WINDOW:-240}
STEP=${STEP:-10}
BIN=$(realpath "${BIN:-target/release/netlens}")
SESSION=rss-$$
TMUX_SOCKET=netlens-rss-$$
cleanup() { tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true; }
trap cleanup EXIT
sockets=$(ip netns exec "$NS" ss -tanH | wc -l)
echo "$sockets TCP sockets in $NS; load $(cut -d' ' -f1-3 /proc/loadavg); $(free -m | awk '/Mem/ {print $7}') MB available"
tmux -L "$TMUX_SOCKET" new-session -d -s "$SESSION" -x 200 -y 50 \
  "$BIN --netns $NS --tab sockets --no-capture --no-bpf --interval 1s"
pid=""
for _ in $(seq 1 100); do
  pid=$(pgrep -f "^$BIN --netns $NS" | head -1 || true)
  [[ -n $pid ]] && break
  sleep 0.2
done
[[ -n $pid ]] || { echo "netlens did not start" >&2; exit 1; }
for t in $(seq "$STEP" "$STEP" "$WINDOW"); do
  sleep "$STEP"
  [[ -e /proc/$pid/status ]] || { echo "netlens exited" >&2; exit 1; }
  rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status")
  hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
  echo "t=${t}s RSS $rss MB HWM $hwm MB ($((rss * 1048576 / sockets)) B per socket) load $(cut -d' ' -f1 /proc/loadavg)"
done
grep -E '^(Rss|Anonymous)' "/proc/$pid/smaps_rollup" || true
tmux -L "$TMUX_SOCKET" send-keys -t "$SESSION" q
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
