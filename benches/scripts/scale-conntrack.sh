#!/usr/bin/env bash
# Fills a throw-away namespace (scl-ct) with ENTRIES conntrack entries from
# real UDP datagrams (one per flow, 198.18.0.1 -> 198.18.0.1 on its
# loopback; nothing leaves it), runs CMD inside with $NS set, and cleans up.
#
# nf_conntrack_max is read-only inside a namespace on this kernel (6.18), so
# the host's value is raised to ENTRIES + 10% for the run and restored on
# exit (the hash table size is not touched).
#
# Usage (root): benches/scripts/scale-conntrack.sh [ENTRIES] [-- CMD...]
#   default 1000000 entries.
set -euo pipefail
cd "$(dirname "$0")/../.."
ENTRIES=${1:-1000000}
shift $(( $# >= 1 ? 1 : 0 ))
[[ "${1:-}" == "--" ]] && shift
NS=${NS:-scl-ct}
if [[ $(id -u) -ne 0 ]]; then echo "needs root (namespace, iptables, sysctl)" >&2; exit 2; fi
if (( ENTRIES < 1 || ENTRIES > 2000000 )); then echo "ENTRIES must be 1..2000000" >&2; exit 2; fi
MAX=/proc/sys/net/netfilter/nf_conntrack_max
OLD_MAX=
BIN=$(mktemp -d)
cleanup() {
  ip netns del "$NS" 2>/dev/null || true
  [[ -n "$OLD_MAX" ]] && echo "$OLD_MAX" > $MAX
  rm -rf "$BIN"
}
trap cleanup EXIT
gcc -O2 -o "$BIN/udp-flows" benches/scripts/udp-flows.c
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" addr add 198.18.0.1/32 dev lo
ip netns exec "$NS" sysctl -qw net.netfilter.nf_conntrack_udp_timeout=900
ip netns exec "$NS" iptables -A OUTPUT -m conntrack --ctstate NEW -j ACCEPT
OLD_MAX=$(cat $MAX)
want=$(( ENTRIES + ENTRIES / 10 + 1000 ))
(( want > OLD_MAX )) && echo $want > $MAX
start=$(date +%s.%N)
sent=$(ip netns exec "$NS" "$BIN/udp-flows" 198.18.0.1 "$ENTRIES")
echo "scl-ct: $sent datagrams, conntrack -C $(ip netns exec "$NS" conntrack -C), nf_conntrack_max $(cat $MAX) (was $OLD_MAX), in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
if (( $# > 0 )); then NS=$NS "$@"; fi
