#!/usr/bin/env bash
# Fills a throw-away namespace (scl-sock) with CONNS established loopback TCP
# connections (2*CONNS sockets: both ends) held by processes of at most
# 19,000 fds each (the hard limit here is 20,000), plus about TW TIME_WAIT
# sockets kept alive by a churn (TW connections at once, then TW per 60 s),
# runs CMD inside it with $NS set, and removes everything on exit.
#
# Usage (root): benches/scripts/scale-sockets.sh [CONNS] [TW] [-- CMD...]
#   default 500000 connections (1,000,000 sockets) and 100000 TIME_WAIT.
# Without CMD it prints the counts (ss -s) and exits. Everything lives at
# most LIFETIME seconds (default 900): the holders exit by themselves.
set -euo pipefail
cd "$(dirname "$0")/../.."
CONNS=${1:-500000}
TW=${2:-100000}
shift $(( $# >= 2 ? 2 : $# ))
[[ "${1:-}" == "--" ]] && shift
LIFETIME=${LIFETIME:-900}
NS=${NS:-scl-sock}
PER_PROC=9500            # connections per holder: 19,000 fds
CHURNERS=4               # one listening port each: TIME_WAIT needs ports per peer
if [[ $(id -u) -ne 0 ]]; then echo "needs root (network namespace)" >&2; exit 2; fi
if (( CONNS < 1 || CONNS > 600000 || TW < 0 || TW > 240000 )); then
  echo "CONNS must be 1..600000 and TW 0..240000" >&2; exit 2
fi
PIDS=()
HOLD=$(mktemp -d)   # not BIN: a caller's BIN (the netlens to measure) passes through to CMD
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$HOLD"
}
trap cleanup EXIT
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $s != Z* ]]; }
gcc -O2 -o "$HOLD/hold-conns" benches/scripts/hold-conns.c
ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
ip netns exec "$NS" sysctl -qw net.ipv4.tcp_max_tw_buckets=$((TW * 2 + 1000))

start=$(date +%s.%N)
left=$CONNS; port=2000   # listeners below the ephemeral range
while (( left > 0 )); do
  n=$(( left < PER_PROC ? left : PER_PROC ))
  ip netns exec "$NS" "$HOLD/hold-conns" $port $n "$LIFETIME" 0 >/dev/null &
  PIDS+=($!)
  left=$((left - n)); port=$((port + 1))
done
if (( TW > 0 )); then
  for i in $(seq 1 $CHURNERS); do
    ip netns exec "$NS" "$HOLD/hold-conns" $((3000 + i)) $((TW / CHURNERS)) "$LIFETIME" 1 >/dev/null 2>&1 &
    PIDS+=($!)
  done
fi
for _ in $(seq 1 300); do
  for pid in "${PIDS[@]}"; do alive "$pid" || { echo "a holder failed" >&2; exit 1; }; done
  est=$(ip netns exec "$NS" ss -tanH state established | wc -l)
  (( est >= 2 * CONNS )) && break
  sleep 1
done
tw=$(ip netns exec "$NS" ss -tanH state time-wait | wc -l)
echo "scl-sock: $est established sockets, $tw TIME_WAIT, $(( ${#PIDS[@]} )) holder processes, up in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
if (( $# > 0 )); then
  NS=$NS "$@"
else
  ip netns exec "$NS" ss -s
fi
