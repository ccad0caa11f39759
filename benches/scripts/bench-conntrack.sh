#!/usr/bin/env bash
# Times netlens' conntrack entry dump against `conntrack -L`, side by side,
# on ~17,000 real entries (root only).
#
# It builds a private network namespace, puts 198.18.0.1/32 on its loopback,
# adds one iptables rule matching on conntrack state (so conntrack runs there), raises the UDP timeout
# and sends ENTRIES UDP datagrams from 198.18.0.1 to 198.18.0.1, one per
# destination port: each is a new conntrack entry. Traffic never leaves that
# namespace's loopback; the namespace is deleted on exit.
#
# Usage: benches/scripts/bench-conntrack.sh [ENTRIES]   (default 17000)
set -euo pipefail
cd "$(dirname "$0")/../.."
ENTRIES=${1:-17000}
if [[ $(id -u) -ne 0 ]]; then
    echo "needs root (network namespace, iptables, ctnetlink); running only the parse bench" >&2
    exec cargo bench --bench conntrack
fi
if (( ENTRIES < 1 || ENTRIES > 50000 )); then
    echo "ENTRIES must be 1..50000" >&2
    exit 2
fi
NS="netlens-ctbench-$$"
cleanup() { ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" addr add 198.18.0.1/32 dev lo
ip netns exec "$NS" sysctl -q -w net.netfilter.nf_conntrack_udp_timeout=600
ip netns exec "$NS" iptables -A OUTPUT -m conntrack --ctstate NEW -j ACCEPT

echo "creating $ENTRIES entries in $NS ..."
ip netns exec "$NS" bash -c '
    for ((p = 10000; p < 10000 + '"$ENTRIES"'; p++)); do
        echo x 2>/dev/null > /dev/udp/198.18.0.1/$p || true
    done'
COUNT=$(ip netns exec "$NS" conntrack -C)
echo "conntrack -C: $COUNT entries"

ROUNDS=10
echo
echo "== conntrack -L > /dev/null, $ROUNDS rounds"
start=$(date +%s%N)
for ((i = 0; i < ROUNDS; i++)); do
    ip netns exec "$NS" conntrack -L >/dev/null 2>&1
done
end=$(date +%s%N)
echo "conntrack -L: $(( (end - start) / ROUNDS / 1000 )) us per listing (process start and text output included)"

echo
echo "== netlens snapshot --json --section conntrack (baseline + 1 sample with entries)"
cargo build --release --quiet
start=$(date +%s%N)
./target/release/netlens snapshot --json --section conntrack --interval 100ms --netns "$NS" >/tmp/netlens-ctbench.json
end=$(date +%s%N)
echo "netlens snapshot: $(( (end - start) / 1000 )) us total (two collections, one 100 ms interval, 1 dump, JSON of every entry)"
python3 -c 'import json,sys; d=json.load(open("/tmp/netlens-ctbench.json")); print("netlens listed", len(d["conntrack"]["entries"]), "entries")' 2>/dev/null || true

echo
echo "== netlens dump + parse alone (criterion, in the same namespace)"
NETLENS_BENCH_NETNS="$NS" cargo bench --bench conntrack -- "real ctnetlink dump"
