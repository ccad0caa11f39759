#!/usr/bin/env bash
# Per-flow counts in the kernel against the capture, same traffic, same run:
# the live view (Flows tab, in a detached tmux pane; its capture thread,
# sampler and the eBPF flow counter at tc) and `tcpdump -w /dev/null` watch
# one veth while a bounded UDP generator (`netlens load udp`, capped in
# rate and seconds) sends small packets as fast as it can. Prints:
#   - each one's CPU per packet (user + system from /proc/PID/stat, and
#     on-CPU ns from schedstat), and what each counted against what arrived;
#   - the live view's CPU over as many seconds with no traffic before the
#     flood (redraws, the sampler), what is left per packet beyond it, and
#     its threads' shares, on CPU and switches a second (the capture
#     samples while the kernel counts: docs/flow-counts.md);
#   - the eBPF program's own cost per packet (run_time_ns / run_cnt from the
#     program's fdinfo; kernel.bpf_stats_enabled is set for the run and put
#     back);
#   - the generator flow's packets as `snapshot --json` gives them (kernel
#     counts) and the capture's own totals and drops.
# Everything runs in two namespaces this script creates (nlfb-*), addressed
# from 198.18.0.0/15, removed at the end. Needs root, tmux and tcpdump.
#   - the slope: each tool's CPU per packet between a slow flood (LOW pps,
#     default 20000) and the full-rate one, where fixed costs cancel.
# Usage: benches/scripts/bench-flow-counts.sh [seconds, default 5] [pps cap, default 2000000]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-5}
PPS=${2:-2000000}
LOW=${LOW:-20000}
SIZE=32 # UDP payload bytes: a 74-byte frame
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, eBPF, packet sockets)" >&2; exit 1; }
for tool in tcpdump tmux; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install $tool" >&2; exit 1; }
done
NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")
[ -x "$NETLENS" ] || { echo "build first: cargo build --release" >&2; exit 1; }

GEN=nlfb-gen-$$
CAP=nlfb-cap-$$
WORK=$(mktemp -d)
PIDS=()
TMUX_SOCKET=nlfb-$$
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
    sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS" || true
    tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$GEN" 2>/dev/null || true
    ip netns del "$CAP" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$GEN"
ip netns add "$CAP"
ip -n "$GEN" link add nlfb-gen type veth peer name nlfb-cap netns "$CAP"
ip -n "$GEN" addr add 198.18.43.1/24 dev nlfb-gen
ip -n "$CAP" addr add 198.18.43.2/24 dev nlfb-cap
for ns in "$GEN" "$CAP"; do ip -n "$ns" link set lo up; done
ip -n "$GEN" link set nlfb-gen up
ip -n "$CAP" link set nlfb-cap up

ip netns exec "$CAP" "$NETLENS" load serve --bind 198.18.43.2 --port 9000 \
    --duration "$((3 * SECS + 30))s" >/dev/null &
PIDS+=($!)
sysctl -q -w kernel.bpf_stats_enabled=1
tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x 120 -y 30 \
    "exec $NETLENS --netns $CAP --tab flows"
NL=$(tmux -L "$TMUX_SOCKET" list-panes -F '#{pane_pid}')
ip netns exec "$CAP" tcpdump -n -i nlfb-cap -w /dev/null 2> "$WORK/td.err" &
TD=$!; PIDS+=($TD)
"$NETLENS" snapshot --json --section flows --netns "$CAP" --interval "$((3 * SECS + 8))s" \
    > "$WORK/snap.json" 2> "$WORK/snap.err" &
SNAP=$!; PIDS+=($SNAP)
sleep 2

cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Each thread of the live view: name, ns on CPU (schedstat) and context
# switches (its wakeups, about).
threads_of() {
    for t in /proc/"$1"/task/*; do
        echo "$(tr ' ' _ < "$t/comm") $(cut -d' ' -f1 "$t/schedstat")" \
            "$(awk '/^voluntary/ {v = $2} /^nonvoluntary/ {n = $2} END {print v + n}' "$t/status")"
    done
}
oncpu_of() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {print s}'; }
# The live view's SCHED_CLS programs (prog_type 3): run time and runs.
bpf_of() {
    grep -l '^prog_type:[[:space:]]*3$' /proc/"$1"/fdinfo/* 2>/dev/null |
        xargs -r awk '/^run_time_ns/ {t += $2} /^run_cnt/ {c += $2} END {print t + 0, c + 0}'
}
rx() { ip netns exec "$CAP" cat /sys/class/net/nlfb-cap/statistics/rx_packets; }
# One flood of SECS seconds capped at $1 pps: sets P_<what> to the packets
# that arrived and each tool's CPU (ticks, on-CPU ns) over it.
flood() {
    local nl0 td0 nln0 tdn0 before
    nl0=$(cpu_of "$NL"); td0=$(cpu_of "$TD"); nln0=$(oncpu_of "$NL"); tdn0=$(oncpu_of "$TD")
    before=$(rx)
    ip netns exec "$GEN" "$NETLENS" load udp --to 198.18.43.2:9000 --size "$SIZE" \
        -b "$(($1 * SIZE * 8))" -t "${SECS}s" --json | tail -1 > "$WORK/gen.json"
    sleep 0.5
    F_packets=$(($(rx) - before))
    F_nl=$(($(cpu_of "$NL") - nl0)); F_td=$(($(cpu_of "$TD") - td0))
    F_nln=$(($(oncpu_of "$NL") - nln0)); F_tdn=$(($(oncpu_of "$TD") - tdn0))
}
# The live view's own cost with no traffic (redraws, the sampler's scans):
# what the same seconds cost it before the flood.
idle0=$(cpu_of "$NL"); idle_n0=$(oncpu_of "$NL"); sleep "$SECS"
idle1=$(cpu_of "$NL"); idle_n1=$(oncpu_of "$NL")
# A slow flood first: the difference between the two floods is what the
# packets cost each tool (its per-packet slope), the fixed costs cancel.
flood "$LOW"
low_packets=$F_packets; low_nl=$F_nl; low_td=$F_td
threads_of "$NL" > "$WORK/threads0"
read -r bpf_t0 bpf_c0 <<< "$(bpf_of "$NL")"
flood "$PPS"
threads_of "$NL" > "$WORK/threads1"
read -r bpf_t1 bpf_c1 <<< "$(bpf_of "$NL")"
tmux -L "$TMUX_SOCKET" capture-pane -p > "$WORK/screen"
kill -INT "$TD"; wait "$TD" || true
wait "$SNAP" || true
HZ=$(getconf CLK_TCK)
packets=$F_packets
sent=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("packets") or d.get("sent_packets") or "?")' "$WORK/gen.json" 2>/dev/null || echo "?")
td_got=$(awk '/packets captured/ {print $1}' "$WORK/td.err" | tail -1)
td_drop=$(awk '/dropped by kernel/ {print $1}' "$WORK/td.err" | tail -1)
echo "veth, ${SECS}s of ${SIZE}-byte UDP at up to ${PPS} pps: generator says sent $sent; $packets arrived ($((packets / SECS)) pps); $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v p="$packets" -v b="$F_nl" -v d="$F_td" -v hz="$HZ" -v i="$((idle1 - idle0))" -v j="$((idle_n1 - idle_n0))" \
    -v nb="$F_nln" -v tb="$F_tdn" -v s="$SECS" 'BEGIN {
    printf "live view  CPU %.2f s  %.0f ns/packet  (on CPU %.0f ns/packet)\n", b / hz, b / hz * 1e9 / p, nb / p
    printf "live view  idle %.2f s over as long (%.1f ms a second); beyond it %.0f ns/packet  (on CPU %.0f ns/packet)\n", i / hz, i / hz * 1000 / s, (b - i) / hz * 1e9 / p, (nb - j) / p
    printf "tcpdump    CPU %.2f s  %.0f ns/packet  (on CPU %.0f ns/packet)\n", d / hz, d / hz * 1e9 / p, tb / p
    printf "total per packet, live view / tcpdump: %.2f\n", b / d
}'
awk -v lp="$low_packets" -v p="$packets" -v ln="$low_nl" -v n="$F_nl" -v lt="$low_td" -v t="$F_td" -v hz="$HZ" -v low="$LOW" 'BEGIN {
    dp = p - lp
    if (dp <= 0) { print "slope: the full-rate flood moved no more packets than the slow one"; exit }
    nl = (n - ln) / hz * 1e9 / dp; td = (t - lt) / hz * 1e9 / dp
    printf "per packet, slope between %d packets (flood capped at %d pps) and %d: live view %.0f ns, tcpdump %.0f ns, ratio %.2f\n", lp, low, p, nl, td, (td > 0 ? nl / td : 0)
}'
awk -v s="$SECS" 'NR == FNR {t0[$1] += $2; w0[$1] += $3; next} {t1[$1] += $2; w1[$1] += $3}
    END {printf "live view threads (ms/s on CPU, switches/s):"
        for (n in t1) if (t1[n] > t0[n]) printf " %s %.2f %.0f;", n, (t1[n] - t0[n]) / 1e6 / s, (w1[n] - w0[n]) / s
        print ""}' "$WORK/threads0" "$WORK/threads1"
awk -v t="$((bpf_t1 - bpf_t0))" -v c="$((bpf_c1 - bpf_c0))" 'BEGIN {
    if (c > 0) printf "eBPF flow counter: %d runs, %.0f ns/run (in softirq, charged to no process above)\n", c, t / c
}'
echo "tcpdump: captured ${td_got:-?}, dropped by kernel ${td_drop:-?}"
python3 - "$WORK/snap.json" "$((low_packets + packets))" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
arrived = int(sys.argv[2])
if not lines:
    sys.exit("snapshot printed nothing")
s = lines[-1]
c = s.get("capture") or {}
udp = [f for f in s.get("flows") or [] if f["proto"] == "udp" and f["dst"].endswith(":9000")]
counted = sum(f["packets"] for f in udp)
print(f"snapshot --json: flow counts by {c.get('flow_counts')}; generator flow {counted} packets "
      f"({counted / max(arrived, 1):.4f} of what arrived in both floods)")
print(f"capture: {c.get('packets')} packets (sampled 1 in {c.get('sample_every')}, scaled), "
      f"dropped by kernel {c.get('kernel_dropped')}")
EOF
grep -m1 -o 'counts[^│]*' "$WORK/screen" | head -1 | sed 's/^/live view header: /' || true
