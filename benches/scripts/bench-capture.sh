#!/usr/bin/env bash
# Live capture cost, side by side: `netlens capture -w /dev/null` and
# `tcpdump -w /dev/null` capture the same veth at the same time while a
# bounded UDP generator (`netlens load udp`, capped in rate and seconds)
# sends ~RATE packets/s across it. Prints each capturer's CPU seconds
# (user + system, from /proc/PID/stat over the generator's run), CPU per
# packet, and
# kernel drops (netlens: PACKET_STATISTICS; tcpdump: "dropped by kernel").
# Everything runs in two network namespaces this script creates, addressed
# from 198.18.0.0/15, and is removed at the end. Needs root and tcpdump.
# Note: the kernel copies each packet into both rings in softirq context,
# which is charged to whatever runs then (mostly the generator), not to the
# capturers; what differs between them is their own user-space walk of the
# ring, their wakeups and what they do per packet.
# UI=1 measures the live view (Flows tab in a detached tmux pane) instead
# of `netlens capture`; its drops are read from the screen's header.
# TCPDUMP=print runs `tcpdump -n` printing every line to /dev/null instead
# of writing the packets (`-w /dev/null`).
# PERF=FILE also profiles the netlens process meanwhile (perf record -g).
# FORMAT=pcapng has `netlens capture` write a pcapng file (with its
# sampler, each packet noted with its interface and owner) and tcpdump a
# pcap file, both in a scratch directory, instead of /dev/null.
# Usage: [UI=1] [TCPDUMP=print] [PERF=FILE] [FORMAT=pcapng] benches/scripts/bench-capture.sh [seconds, default 10] [pps, default 200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-10}
PPS=${2:-200000}
SIZE=32 # UDP payload bytes (load udp's least): a 74-byte frame on the wire
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, packet sockets)" >&2; exit 1; }
command -v tcpdump >/dev/null || { echo "missing tcpdump: apt-get install tcpdump" >&2; exit 1; }
cargo build --release --quiet
NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")

GEN=perf-capgen-$$
CAP=perf-capcap-$$
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$GEN" 2>/dev/null || true
    ip netns del "$CAP" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$GEN"
ip netns add "$CAP"
ip -n "$GEN" link add veth-gen type veth peer name veth-cap netns "$CAP"
ip -n "$GEN" addr add 198.18.7.1/24 dev veth-gen
ip -n "$CAP" addr add 198.18.7.2/24 dev veth-cap
ip -n "$GEN" link set veth-gen up
ip -n "$CAP" link set veth-cap up
ip -n "$GEN" link set lo up
ip -n "$CAP" link set lo up

# The receiving end: netlens' own server, so no ICMP unreachables are sent.
ip netns exec "$CAP" "$NETLENS" load serve --bind 198.18.7.2 --port 9000 --duration "$((SECS + 30))s" >/dev/null &
PIDS+=($!)
sleep 0.5

rx_packets() { ip netns exec "$CAP" cat /sys/class/net/veth-cap/statistics/rx_packets; }

# Both capturers start, then the generator; both are still running when it
# ends, and their CPU time is read from /proc/PID/stat then (user + system,
# all threads). `ip netns exec` execs tcpdump, so $! is tcpdump itself.
cpu_of() { awk '{print $14, $15}' "/proc/$1/stat"; }
TMUX_SOCKET=netlens-bench-$$
if [ "${UI:-0}" = 1 ]; then
    # The live view on its Flows tab, in a detached 100x30 tmux pane: its
    # whole process (capture thread, sampler, drawing the packet list).
    command -v tmux >/dev/null || { echo "missing tmux: apt-get install tmux" >&2; exit 1; }
    tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x 100 -y 30 \
        "exec $NETLENS --netns $CAP --iface veth-cap --tab ${UI_TAB:-flows}"
    NL=$(tmux -L "$TMUX_SOCKET" list-panes -F '#{pane_pid}')
    WHAT="netlens live view"
else
    NL_OUT=/dev/null
    [ "${FORMAT:-}" = pcapng ] && NL_OUT="$WORK/nl.pcapng"
    "$NETLENS" capture --netns "$CAP" -i veth-cap -w "$NL_OUT" --duration "$((SECS + 5))s" \
        2> "$WORK/nl.err" &
    NL=$!; PIDS+=($NL)
    WHAT="netlens capture"
fi
if [ "${TCPDUMP:-write}" = print ]; then
    # tcpdump printing every line (what the live view's packet list shows).
    ip netns exec "$CAP" tcpdump -n -i veth-cap > /dev/null 2> "$WORK/td.err" &
else
    TD_OUT=/dev/null
    [ "${FORMAT:-}" = pcapng ] && TD_OUT="$WORK/td.pcap"
    ip netns exec "$CAP" tcpdump -n -i veth-cap -w "$TD_OUT" 2> "$WORK/td.err" &
fi
TD=$!; PIDS+=($TD)
# A pcapng capture opens its ring after its sampler's first sample.
if [ "${FORMAT:-}" = pcapng ]; then sleep 3; else sleep 1; fi
# Per-thread CPU ticks of the live view, by thread name (capture, sampler,
# the UI thread "netlens", ...).
# Per-thread time on CPU in ns (schedstat: finer than the 10 ms ticks of
# /proc/PID/stat), and the process's total.
threads_of() { for t in /proc/"$1"/task/*; do echo "${t##*/} $(cat "$t/comm") $(cut -d' ' -f1 "$t/schedstat")"; done | sort; }
oncpu_of() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {print s}'; }
[ "${UI:-0}" = 1 ] && threads_of "$NL" > "$WORK/threads0"
nl_ns0=$(oncpu_of "$NL"); td_ns0=$(oncpu_of "$TD")
read -r nl_u0 nl_s0 <<< "$(cpu_of "$NL")"
read -r td_u0 td_s0 <<< "$(cpu_of "$TD")"
before=$(rx_packets)
if [ -n "${PERF:-}" ]; then
    # PERF=FILE: a profile of the netlens process over the generator's run
    # (perf record -g; `perf report -i FILE --no-children` reads it).
    perf record -g -o "$PERF" -p "$NL" 2> "$WORK/perf.err" &
    PERF_PID=$!; PIDS+=($PERF_PID)
fi
ip netns exec "$GEN" "$NETLENS" load udp --to 198.18.7.2:9000 --size "$SIZE" \
    -b "$((PPS * SIZE * 8))" -t "${SECS}s" --json | tail -1 > "$WORK/gen.json"
sleep 0.5 # the last ring blocks retire (100 ms timeout) and are read
if [ -n "${PERF:-}" ]; then kill -INT "$PERF_PID"; wait "$PERF_PID" || true; fi
after=$(rx_packets)
[ "${UI:-0}" = 1 ] && threads_of "$NL" > "$WORK/threads1"
nl_ns1=$(oncpu_of "$NL"); td_ns1=$(oncpu_of "$TD")
read -r nl_u1 nl_s1 <<< "$(cpu_of "$NL")"
read -r td_u1 td_s1 <<< "$(cpu_of "$TD")"
kill -INT "$TD"
if [ "${UI:-0}" = 1 ]; then
    # The header's capture line carries the kernel's drop count.
    tmux -L "$TMUX_SOCKET" capture-pane -p > "$WORK/screen"
    tmux -L "$TMUX_SOCKET" kill-server
    grep -m1 -o 'drop[^│]*' "$WORK/screen" > "$WORK/nl.err" || true
    echo "live view: $(cat "$WORK/nl.err")"
    # CPU per thread over the run: name, seconds, ns per packet arrived.
    join "$WORK/threads0" "$WORK/threads1" | awk -v p="$((after - before))" \
        '{s = ($5 - $3) / 1e9; printf "  thread %-10s CPU %.2f s  %.0f ns/packet\n", $2, s, s * 1e9 / p}' 
    wait "$TD" || true
else
    wait "$NL" "$TD" || true
fi
HZ=$(getconf CLK_TCK)
nl_user=$(awk -v a="$nl_u0" -v b="$nl_u1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')
nl_sys=$(awk -v a="$nl_s0" -v b="$nl_s1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')
td_user=$(awk -v a="$td_u0" -v b="$td_u1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')
td_sys=$(awk -v a="$td_s0" -v b="$td_s1" -v hz="$HZ" 'BEGIN {print (b - a) / hz}')
packets=$((after - before))
nl_drops=$(awk '/dropped by kernel/ {print $1}' "$WORK/nl.err" | tail -1)
nl_got=$(awk '/packets captured/ {print $1}' "$WORK/nl.err" | tail -1)
td_drops=$(awk '/dropped by kernel/ {print $1}' "$WORK/td.err" | tail -1)
td_got=$(awk '/packets captured/ {print $1}' "$WORK/td.err" | tail -1)
echo "veth in a namespace, ${SECS}s at ~${PPS} pps asked; $packets packets arrived ($((packets / SECS)) pps); load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
awk -v p="$packets" -v nu="$nl_user" -v ns="$nl_sys" -v tu="$td_user" -v ts="$td_sys" \
    -v what="$WHAT" -v nd="${nl_drops:-?}" -v td="${td_drops:-?}" -v ng="${nl_got:-?}" -v tg="${td_got:-?}" 'BEGIN {
    n = nu + ns; t = tu + ts
    printf "%-16s CPU %.2f s (user %.2f sys %.2f)  %.0f ns/packet  captured %s  dropped by kernel %s\n", what, n, nu, ns, n * 1e9 / p, ng, nd
    printf "tcpdump          CPU %.2f s (user %.2f sys %.2f)  %.0f ns/packet  captured %s  dropped by kernel %s\n", t, tu, ts, t * 1e9 / p, tg, td
    if (t > 0) printf "ratio netlens/tcpdump CPU %.2f (<= 1.00 meets the budget)\n", n / t
}'
awk -v p="$packets" -v n="$((nl_ns1 - nl_ns0))" -v t="$((td_ns1 - td_ns0))" 'BEGIN {
    printf "on CPU (schedstat): netlens %.0f ms  %.0f ns/packet   tcpdump %.0f ms  %.0f ns/packet   ratio %.2f\n", n / 1e6, n / p, t / 1e6, t / p, n / t
}'
