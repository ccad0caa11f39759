#!/bin/bash
# `netlens replay --info` on a recording whose body is nothing but chunk
# sync bytes ("NLck" repeated): the worst case for the scan that rebuilds a
# lost index. Prints wall time, peak RSS and the number of output lines.
# Needs /usr/bin/time. Usage: benches/scripts/bench-replay-damage.sh [MiB...]
set -euo pipefail
BIN=${NETLENS:-target/release/netlens}
DIR=$(mktemp -d /tmp/netlens-bench-damage-XXXX)
trap 'rm -rf "$DIR"' EXIT
for MIB in "${@:-10 20}"; do
    FILE=$DIR/damaged-$MIB.nlrec
    # A real header (from a committed recording), then MIB MiB of sync bytes.
    head -c 16 tests/data/v2.0-capture.nlrec >"$FILE"
    python3 -c "import sys; sys.stdout.buffer.write(b'NLck' * ($MIB * 262144))" >>"$FILE"
    /usr/bin/time -f "%e s %M KiB" -o "$DIR/time" "$BIN" replay --info "$FILE" >"$DIR/out" 2>&1 || true
    echo "$MIB MiB: $(cat "$DIR/time"), $(wc -l <"$DIR/out") lines of output"
done
