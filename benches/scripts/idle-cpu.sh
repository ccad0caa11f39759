#!/usr/bin/env bash
# Measures the idle CPU cost of the netlens TUI: runs target/release/netlens
# in a detached 100x30 tmux session (a real tty), lets it settle 5 s, then
# measures utime+stime over a 30 s window and prints % of one core.
# Budget: < 1% of one core at the default 1 Hz refresh.
#
# Usage: benches/scripts/idle-cpu.sh [extra netlens args...]
# Env:   SETTLE (default 5), WINDOW (default 30), BUDGET_PCT (default 1.0)
set -euo pipefail

cd "$(dirname "$0")/../.."
SETTLE=${SETTLE:-5}
WINDOW=${WINDOW:-30}
BUDGET_PCT=${BUDGET_PCT:-1.0}

cargo build --release --quiet
BIN="$PWD/target/release/netlens"
[[ -x $BIN ]] || { echo "idle-cpu: $BIN not built" >&2; exit 1; }

# Private tmux server (own socket) so no user session is touched.
SOCK="netlens-idle-$$"
SESSION="netlens-idle"
cleanup() {
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
}
trap cleanup EXIT INT TERM

args=""
for a in "$@"; do args+=" $(printf '%q' "$a")"; done
tmux -L "$SOCK" -f /dev/null new-session -d -s "$SESSION" -x 100 -y 30 \
    "exec $(printf '%q' "$BIN")$args"
PANE_PID=$(tmux -L "$SOCK" list-panes -t "$SESSION" -F '#{pane_pid}' | head -n1)

# The pane runs `sh -c "exec netlens ..."`, so the pane pid becomes
# netlens; fall back to a direct child named netlens just in case.
find_pid() {
    local p=$1
    if [[ "$(cat /proc/$p/comm 2>/dev/null)" == netlens ]]; then echo "$p"; return; fi
    local c
    for c in $(cat /proc/$p/task/*/children 2>/dev/null); do
        if [[ "$(cat /proc/$c/comm 2>/dev/null)" == netlens ]]; then echo "$c"; return; fi
    done
}

sleep "$SETTLE"
PID=$(find_pid "$PANE_PID")
if [[ -z $PID ]]; then
    echo "idle-cpu: netlens is not running in the tmux pane (it exited?). Pane content:" >&2
    tmux -L "$SOCK" capture-pane -p -t "$SESSION" >&2 || true
    exit 1
fi

ticks() { # utime + stime (fields 14, 15; parsed after the ")" of comm)
    local rest
    rest=$(sed -e 's/^.*) //' "/proc/$1/stat")
    awk '{ print $12 + $13 }' <<<"$rest"
}
HZ=$(getconf CLK_TCK)
t0=$(ticks "$PID"); s0=$(date +%s.%N)
sleep "$WINDOW"
[[ -r /proc/$PID/stat ]] || { echo "idle-cpu: netlens (pid $PID) exited during the window" >&2; exit 1; }
t1=$(ticks "$PID"); s1=$(date +%s.%N)

# Show that the TUI really rendered (top of the screen).
echo "--- screen (first lines) ---"
tmux -L "$SOCK" capture-pane -p -t "$SESSION" | grep -v '^[[:space:]]*$' | head -n 3 || true
echo "----------------------------"

read -r pct verdict < <(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v s0="$s0" -v s1="$s1" -v budget="$BUDGET_PCT" \
    'BEGIN { p = (b - a) / hz / (s1 - s0) * 100; printf "%.3f %s\n", p, (p < budget ? "OK" : "OVER_BUDGET") }')

echo "netlens idle CPU: ${pct}% of one core  (pid $PID, $((t1 - t0)) ticks @ ${HZ} Hz over ${WINDOW}s, 100x30 tty)"
echo "budget < ${BUDGET_PCT}%: ${verdict}"
