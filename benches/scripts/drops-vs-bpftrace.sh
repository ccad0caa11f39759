#!/usr/bin/env bash
# What counting drop reasons costs the kernel, side by side with bpftrace.
# A small C sender floods a closed UDP port on loopback inside a network
# namespace this script creates with N datagrams (default 1,000,000); every
# one is dropped (NO_SOCKET) in the sender's own system call, so the
# sender's time per datagram grows by what each attached program costs per
# drop. Three runs each, the median shown:
#   none      nothing attached
#   netlens   `netlens snapshot` counting the drops (its eBPF program)
#   bpftrace  bpftrace -e 'tracepoint:skb:kfree_skb { @[args->reason] = count(); }'
# Then netlens' own CPU per sample (user + system over 30 samples at 100 ms,
# from /proc/PID/stat) with and without its program (--no-bpf), while the
# namespace sees drops, and the program's load time.
# Needs root, cc and bpftrace (apt-get install bpftrace; not a test
# dependency). Bounded: N datagrams to 127.0.0.1 in the namespace, nothing
# leaves it; the namespace and every process started are removed at the end.
# Usage: benches/scripts/drops-vs-bpftrace.sh [N, default 1000000]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
[ "$N" -le 10000000 ] || { echo "N at most 10,000,000" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (namespaces, eBPF)" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "missing bpftrace: apt-get install bpftrace" >&2; exit 1; }
command -v cc >/dev/null || { echo "missing cc: apt-get install gcc" >&2; exit 1; }
cargo build --release --quiet
NETLENS=$(realpath "${CARGO_TARGET_DIR:-target}/release/netlens")

NS=bpf-bench-$$
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
# No ICMP port unreachables: only the drop itself is measured.
ip netns exec "$NS" sysctl -q -w net.ipv4.icmp_ratelimit=1000000 net.ipv4.icmp_msgs_per_sec=0 net.ipv4.icmp_msgs_burst=0 2>/dev/null || true

cat >"$WORK/flood.c" <<'EOF'
/* Sends N one-byte datagrams to 127.0.0.1:9 (closed); prints ns each. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof to);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
EOF
cc -O2 -o "$WORK/flood" "$WORK/flood.c"

flood() { ip netns exec "$NS" "$WORK/flood" "$N"; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# Attaches, waits until it holds its bpf link/perf event, runs the flood.
with() {
    "$@" >"$WORK/out" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    for _ in $(seq 100); do
        if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -e bpf_link -e perf_event -e 'bpf-prog'; then break; fi
        sleep 0.1
    done
    sleep 0.5
    flood
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

declare -A NS_PER
for run in 1 2 3; do
    echo "none $(flood)" >>"$WORK/times"
    echo "netlens $(with "$NETLENS" snapshot --json --count 1000 --no-capture --section drops)" >>"$WORK/times"
    echo "bpftrace $(with bpftrace -e 'tracepoint:skb:kfree_skb { @[args->reason] = count(); }')" >>"$WORK/times"
done
for kind in none netlens bpftrace; do
    NS_PER[$kind]=$(awk -v k="$kind" '$1 == k {print $2}' "$WORK/times" | median)
done
echo "sender ns/datagram (median of 3, $N drops each):"
for kind in none netlens bpftrace; do
    extra=$(awk -v a="${NS_PER[$kind]}" -v b="${NS_PER[none]}" 'BEGIN {printf "%+.1f", a - b}')
    printf '  %-9s %8s ns   per drop %s ns\n' "$kind" "${NS_PER[$kind]}" "$extra"
done

# netlens' CPU per sample in steady state: the CPU ticks (user + system,
# /proc/PID/stat, 100/s) between 1.5 s after start (loaded, attached) and
# 4 s later, i.e. over 40 samples at 100 ms, while a bounded flood runs.
cpu_per_sample() {
    "$NETLENS" snapshot --json --interval 100ms --count 80 --no-capture "$@" >/dev/null 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    ip netns exec "$NS" "$WORK/flood" "$N" >/dev/null &
    local flooder=$!
    PIDS+=("$flooder")
    ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
    sleep 1.5
    local t0; t0=$(ticks)
    sleep 4
    local t1; t1=$(ticks)
    kill "$pid" "$flooder" 2>/dev/null || true
    wait "$pid" "$flooder" 2>/dev/null || true
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) * 10 / 40}'
}
echo "netlens CPU per sample (ms, user+system, over 40 samples at 100 ms, under a flood):"
for run in 1 2 3; do
    echo "with $(cpu_per_sample)" >>"$WORK/cpu"
    echo "without $(cpu_per_sample --no-bpf)" >>"$WORK/cpu"
done
echo "  with the program  $(awk '$1 == "with" {print $2}' "$WORK/cpu" | median) (median of 3)"
echo "  --no-bpf          $(awk '$1 == "without" {print $2}' "$WORK/cpu" | median)"

# Load + attach time, from the program's own log line.
for _ in 1 2 3; do
    NETLENS_DEBUG_BPF=1 "$NETLENS" snapshot --json --count 1 --interval 100ms --no-capture --section drops 2>&1 >/dev/null |
        sed -n 's/.*attached (\(.*\)) in \(.*\) ms/\2/p'
done | median | awk '{print "load + attach (median of 3): " $1 " ms"}'
echo "object: $(stat -c %s ebpf/drops.bpf.o) bytes"
