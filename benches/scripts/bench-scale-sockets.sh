#!/usr/bin/env bash
# Side by side at scale: run inside scale-sockets.sh (which sets $NS):
#   benches/scripts/scale-sockets.sh 500000 100000 -- benches/scripts/bench-scale-sockets.sh
# - ss -tani / ss -tanpi: CPU (user+sys) and wall per run, output to /dev/null;
# - netlens live view on the Sockets tab (tmux 200x50, --no-capture --no-bpf,
#   1 s interval): time to the first sample drawn (owners included), CPU per
#   sample in steady state (from /proc/PID/stat over WINDOW seconds, sampler
#   and UI together), RSS, and how long a key (s: next sort column) takes to
#   show on screen (tmux polled every 2 ms, so +-2 ms and tmux's own delay).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NS:?run me inside scale-sockets.sh}"
WINDOW=${WINDOW:-20}
BIN=${BIN:-target/release/netlens}
TICK=$(getconf CLK_TCK)
SESSION=scl-sock-$$
cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; }
trap cleanup EXIT

cpu_of() { # user+sys seconds of a command, its wall time
  /usr/bin/time -f "%U %S %e" "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.3f %.3f\n", $1 + $2, $3}'
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2 3; do
  read -r cpu wall < <(cpu_of ip netns exec "$NS" ss -tani)
  echo "ss -tani: cpu ${cpu} s, wall ${wall} s"
done

# CPU per sample without a screen: `snapshot` takes a baseline and COUNT
# samples; (cpu(count 8) - cpu(count 4)) / 4 is one steady-state sample
# (owners cached), the difference cancelling start-up and the first owner
# scan. Both runs outlive that scan (7-9 s at a million sockets): a
# `--count 1` run exits in the middle of it, so a difference against it
# counted the rest of the scan as steady-state samples.
snap() {
  /usr/bin/time -f "%U %S %e %M" "$BIN" snapshot --netns "$NS" --no-capture --no-bpf \
    --interval 1s --section "$1" --count "$2" ${3:-} 2>&1 >/dev/null | tail -1
}
read -r u1 s1 e1 m1 < <(snap tcp 4)
read -r u4 s4 e4 m4 < <(snap tcp 8)
echo "netlens snapshot --count 4: cpu $(echo "$u1 + $s1" | bc) s, wall $e1 s; --count 8: cpu $(echo "$u4 + $s4" | bc) s, wall $e4 s"
echo "netlens steady-state sample: cpu $(echo "($u4 + $s4 - $u1 - $s1) / 4" | bc -l | cut -c1-5) s"
read -r u s e m < <(snap sockets 1 --json)
echo "netlens snapshot --json --section sockets (every socket as JSON, streamed): cpu $(echo "$u + $s" | bc) s, wall $e s, max RSS $((m / 1024)) MB"

screen() { tmux capture-pane -p -t "$SESSION"; }
start=$(date +%s%N)
tmux new-session -d -s "$SESSION" -x 200 -y 50 \
  "$BIN --netns $NS --tab sockets --no-capture --no-bpf --interval 1s"
pid=$(tmux list-panes -t "$SESSION" -F '#{pane_pid}')
# The first sample is drawn when a connection's row shows.
for _ in $(seq 1 30000); do
  screen | grep -q '127\.0\.0\.1:' && break
  sleep 0.002
done
first=$(( ($(date +%s%N) - start) / 1000000 ))
echo "netlens first sample drawn: ${first} ms after start (process start, namespace, owners)"
sleep 3
stat() { awk '{print $14 + $15}' /proc/$pid/stat; }
c0=$(stat); t0=$(date +%s%N)
sleep "$WINDOW"
c1=$(stat); t1=$(date +%s%N)
secs=$(echo "($t1 - $t0) / 1000000000" | bc -l)
echo "netlens live: cpu $(echo "($c1 - $c0) / $TICK" | bc -l | cut -c1-6) s over $(echo "$secs" | cut -c1-5) s = $(echo "($c1 - $c0) / $TICK / $secs" | bc -l | cut -c1-5) s per 1 s sample"
echo "netlens RSS: $(awk '/VmRSS/ {print $2 / 1024 " MB"}' /proc/$pid/status), HWM $(awk '/VmHWM/ {print $2 / 1024 " MB"}' /proc/$pid/status)"
for k in 1 2 3 4 5; do
  before=$(screen | sed -n 3,10p)
  t0=$(date +%s%N)
  tmux send-keys -t "$SESSION" s
  for _ in $(seq 1 5000); do
    [[ "$(screen | sed -n 3,10p)" != "$before" ]] && break
    sleep 0.002
  done
  echo "key s (sort) shown after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sleep 1.3
done
screen | head -12
tmux kill-session -t "$SESSION"
# Last: ss -p reads every process's fd table for each socket (minutes here).
if [[ "${SS_P:-1}" == 1 ]]; then
  read -r cpu wall < <(cpu_of ip netns exec "$NS" ss -tanpi)
  echo "ss -tanpi: cpu ${cpu} s, wall ${wall} s"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
