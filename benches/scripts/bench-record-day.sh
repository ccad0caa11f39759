#!/usr/bin/env bash
# A day of recording at scale (issue 21), measured in two steps:
#  1. real: a throw-away namespace (rday-rec) holds CONNS idle loopback
#     connections (2*CONNS sockets, benches/scripts/hold-conns.c) plus TALK
#     connections with light bounded traffic (rday-traffic.py: a 64-byte
#     echo every 50 ms each, so the recorder's 200 packets/s cap is reached),
#     and `netlens record --netns rday-rec` records it for MINUTES minutes
#     at 1 s with capture on (headers, the default). Prints its bytes per
#     hour and its CPU.
#  2. the day: `benches/record_day.rs` rewrites that real recording's
#     samples and packets, cycled, into 86,400 samples (1 s apart, counters
#     still rising) through the real Recorder, then measures size per hour,
#     seeks to 200 random minutes, and replay at 3600x.
# Everything lives in namespace rday-rec on its loopback; processes are
# bounded in time (LIFETIME) and killed on exit with the namespace.
# Writing the day takes ~4 min per hour of recording on a busy 2-core VM:
# NETLENS_DAY_HOURS=N writes N hours; OUT=FILE keeps the real recording (DAY=0
# stops after it) and
# NETLENS_DAY_FILE=FILE the day file (reused, not rewritten, when it exists).
# Usage (root): benches/scripts/bench-record-day.sh [MINUTES, default 4] [CONNS, default 5000]
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-4}
CONNS=${2:-5000}
TALK=${TALK:-20}
NS=rday-rec
if [[ $(id -u) -ne 0 ]]; then echo "needs root (network namespace)" >&2; exit 2; fi
if (( MINUTES < 1 || MINUTES > 30 || CONNS < 1 || CONNS > 9500 )); then
  echo "MINUTES must be 1..30 and CONNS 1..9500" >&2; exit 2
fi
LIFETIME=$(( MINUTES * 60 + 120 ))
PIDS=()
WORK=$(mktemp -d)
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
cargo build --release --quiet
NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")
gcc -O2 -o "$WORK/hold-conns" benches/scripts/hold-conns.c
ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" "$WORK/hold-conns" 2000 "$CONNS" "$LIFETIME" 0 >/dev/null &
PIDS+=($!)
ip netns exec "$NS" python3 benches/scripts/rday-traffic.py 2001 "$TALK" 0.05 "$LIFETIME" &
PIDS+=($!)
for _ in $(seq 1 120); do
  est=$(ip netns exec "$NS" ss -tanH state established | wc -l)
  (( est >= 2 * (CONNS + TALK) )) && break
  sleep 1
done
echo "rday-rec: $est established sockets ($(ip netns exec "$NS" ss -tanH | wc -l) TCP sockets in all)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
REC=${OUT:-$WORK/real.nlrec}
/usr/bin/time -f "%U %S %M" -o "$WORK/time" \
  "$NETLENS" record --netns "$NS" --interval 1s --duration "${MINUTES}m" \
  --dns-server 127.0.0.1 -o "$REC"
read -r user sys maxrss < "$WORK/time"
bytes=$(stat -c %s "$REC")
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "real recording: $bytes bytes in $MINUTES min: $(( bytes * 60 / MINUTES / 1000000 )) MB per hour;" \
  "recorder CPU $(echo "scale=2; ($user + $sys) * 1000 / ($MINUTES * 60)" | bc) ms per sample, max RSS $(( maxrss / 1024 )) MB"
"$NETLENS" replay --info "$REC" || true
# The holders are no longer needed: free the CPU for the day's bench.
cleanup_holders() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
cleanup_holders
# DAY=0: stop here (OUT=FILE keeps the real recording for later runs).
if [[ ${DAY:-1} == 0 ]]; then exit 0; fi
NETLENS_DAY_SOURCE=$REC cargo bench --bench record_day
