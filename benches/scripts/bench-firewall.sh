#!/usr/bin/env bash
# What reading the firewall's rules costs netlens, beside the tools that
# list them: RULES counting drop rules in nf_tables (one inet chain) and as
# many in the legacy iptables filter table, in a private network namespace
# (root only; no traffic; the namespace is deleted on exit).
#
# netlens reads the rules once per sample: `snapshot --section drops`
# with --count 1 reads them twice (the baseline and the sample). The
# figure per read is half the CPU that snapshot takes beyond the same
# snapshot of an empty namespace. Each command runs RUNS times; medians.
#
# Usage: benches/scripts/bench-firewall.sh [RULES] [RUNS]   (default 10000 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
RULES=${1:-10000}
RUNS=${2:-5}
if [[ $(id -u) -ne 0 ]]; then
    echo "needs root (network namespaces, nft, iptables-legacy)" >&2
    exit 1
fi
cargo build --release --quiet
NETLENS=target/release/netlens
FULL="netlens-fwbench-$$"
EMPTY="netlens-fwbench-empty-$$"
cleanup() { ip netns del "$FULL" 2>/dev/null || true; ip netns del "$EMPTY" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$FULL"
ip netns add "$EMPTY"
rules=$(mktemp)
{
    echo "table inet fw {"
    echo "  chain input {"
    echo "    type filter hook input priority 0; policy accept;"
    for ((i = 0; i < RULES; i++)); do
        echo "    ip saddr 198.18.$((i / 250)).$((i % 250 + 1)) tcp dport $((1000 + i % 60000)) counter drop"
    done
    echo "  }"
    echo "}"
} >"$rules"
ip netns exec "$FULL" nft -f "$rules"
{
    echo "*filter"
    echo ":INPUT ACCEPT [0:0]"
    for ((i = 0; i < RULES; i++)); do
        echo "-A INPUT -s 198.18.$((i / 250)).$((i % 250 + 1))/32 -p tcp -m tcp --dport $((1000 + i % 60000)) -j DROP"
    done
    echo "COMMIT"
} | ip netns exec "$FULL" iptables-legacy-restore
rm -f "$rules"

# CPU seconds (user + system) of a command, median of RUNS.
cpu() {
    local samples=() out
    out=$(mktemp)
    for ((r = 0; r < RUNS; r++)); do
        /usr/bin/time -o "$out" -f '%U %S' "$@" >/dev/null 2>&1
        samples+=("$(awk '{print $1 + $2}' "$out")")
    done
    rm -f "$out"
    printf '%s\n' "${samples[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
SNAPSHOT=("$NETLENS" snapshot --json --section drops --no-bpf --no-capture --interval 1s --count 1)
nft_list=$(cpu ip netns exec "$FULL" nft list ruleset)
legacy_save=$(cpu ip netns exec "$FULL" iptables-legacy-save -c)
full=$(cpu "${SNAPSHOT[@]}" --netns "$FULL")
empty=$(cpu "${SNAPSHOT[@]}" --netns "$EMPTY")
per_read=$(awk -v f="$full" -v e="$empty" 'BEGIN {printf "%.3f", (f - e) / 2}')
listed=$("$NETLENS" snapshot --json --section drops --no-bpf --no-capture --interval 1s \
    --count 1 --netns "$FULL" | python3 -c 'import json,sys; f=json.loads(sys.stdin.readline())["firewall"]; print(f["total_rules"], len(f["dropping"]))')
echo "rules: $RULES nf_tables + $RULES iptables-legacy; netlens read $listed (total, dropping kept)"
echo "| what | CPU s (median of $RUNS) |"
echo "|---|---|"
echo "| nft list ruleset | $nft_list |"
echo "| iptables-legacy-save -c | $legacy_save |"
echo "| netlens snapshot, both rulesets (2 reads) | $full |"
echo "| netlens snapshot, empty namespace | $empty |"
echo "| netlens, one read of both rulesets | $per_read |"
