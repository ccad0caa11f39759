#!/usr/bin/env bash
# Runs the LinkCollector::collect benchmark. As root it builds a private
# namespace with 250 veth pairs (500 interfaces); otherwise it benches the
# host's interfaces. Budget: < 10 ms per sample with 500 interfaces.
# Usage: benches/scripts/bench-interfaces.sh [criterion args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $(id -u) -ne 0 ]]; then
    echo "note: not root; the 500-interface namespace needs root (try: sudo -E $0)" >&2
fi
exec cargo bench --bench interfaces -- "$@"
