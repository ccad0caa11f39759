#!/usr/bin/env bash
# The live view's cost on a box with light traffic, beside btop in the
# same run: each tool in its own detached 100x30 tmux session (a real
# tty), all at once, while loopback carries an iperf3 stream capped at
# 200 Mbit/s and 1,000 HTTP requests a second to nginx (`netlens load
# http -R 1000`, 10 keep-alive connections). After SETTLE seconds, CPU
# is utime+stime over WINDOW seconds; RSS (anonymous and file-backed)
# and the high-water mark are read from /proc/PID/status at the end.
#
# Usage: benches/scripts/bench-idle.sh [netlens binary]
# Env:   SETTLE (default 5), WINDOW (default 30), TRAFFIC (1, or 0 for none)
# Root is not needed; traffic stays on 127.0.0.1.
set -euo pipefail

cd "$(dirname "$0")/../.."
SETTLE=${SETTLE:-5}
WINDOW=${WINDOW:-30}
TRAFFIC=${TRAFFIC:-1}
BIN=${1:-$PWD/target/release/netlens}
[[ -x $BIN ]] || { echo "bench-idle: $BIN not built (cargo build --release)" >&2; exit 1; }
for tool in tmux btop iperf3 nginx; do
    command -v "$tool" >/dev/null || { echo "bench-idle: $tool is not installed" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/bench-idle.XXXXXX)
SOCK="bench-idle-$$"
PIDS=()
cleanup() {
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [[ -f $WORK/nginx.pid ]]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

RUN_FOR=$((SETTLE + WINDOW + 5))
if [[ $TRAFFIC == 1 ]]; then
    IPERF_PORT=$((20000 + $$ % 10000))
    HTTP_PORT=$((IPERF_PORT + 1))
    iperf3 -s -B 127.0.0.1 -p "$IPERF_PORT" -1 >/dev/null 2>&1 &
    PIDS+=($!)
    mkdir -p "$WORK/www"
    head -c 1024 /dev/zero >"$WORK/www/index.html"
    cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $WORK;
    proxy_temp_path $WORK;
    fastcgi_temp_path $WORK;
    uwsgi_temp_path $WORK;
    scgi_temp_path $WORK;
    server { listen 127.0.0.1:$HTTP_PORT; root $WORK/www; }
}
EOF
    nginx -c "$WORK/nginx.conf" -p "$WORK"
    sleep 0.5
    iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -b 200M -t "$RUN_FOR" >"$WORK/iperf3.log" 2>&1 &
    PIDS+=($!)
    "$BIN" load http -c 10 -R 1000 -t "${RUN_FOR}s" "http://127.0.0.1:$HTTP_PORT/" >"$WORK/http.log" 2>&1 &
    PIDS+=($!)
fi

# name|command
TOOLS=(
    "netlens|exec $(printf '%q' "$BIN")"
    "netlens --no-capture|exec $(printf '%q' "$BIN") --no-capture"
    "btop|exec btop"
)
i=0
for t in "${TOOLS[@]}"; do
    if ((i == 0)); then
        tmux -L "$SOCK" -f /dev/null new-session -d -s "t$i" -x 100 -y 30 "${t#*|}"
    else
        tmux -L "$SOCK" new-session -d -s "t$i" -x 100 -y 30 "${t#*|}"
    fi
    i=$((i + 1))
done

sleep "$SETTLE"
ticks() { sed -e 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
declare -A PID T0
for ((i = 0; i < ${#TOOLS[@]}; i++)); do
    PID[$i]=$(tmux -L "$SOCK" list-panes -t "t$i" -F '#{pane_pid}')
    T0[$i]=$(ticks "${PID[$i]}")
done
s0=$(date +%s.%N)
sleep "$WINDOW"
s1=$(date +%s.%N)
HZ=$(getconf CLK_TCK)

printf '| tool | CPU, %% of a core | VmRSS | anonymous | file | high-water mark |\n'
printf '|---|---|---|---|---|---|\n'
for ((i = 0; i < ${#TOOLS[@]}; i++)); do
    p=${PID[$i]}
    [[ -r /proc/$p/stat ]] || { echo "bench-idle: ${TOOLS[$i]%%|*} exited" >&2; exit 1; }
    t1=$(ticks "$p")
    awk -v n="${TOOLS[$i]%%|*}" -v a="${T0[$i]}" -v b="$t1" -v hz="$HZ" -v s0="$s0" -v s1="$s1" \
        -v rss="$(status_kb "$p" VmRSS)" -v anon="$(status_kb "$p" RssAnon)" \
        -v file="$(status_kb "$p" RssFile)" -v hwm="$(status_kb "$p" VmHWM)" \
        'BEGIN { printf "| %s | %.2f | %.1f MiB | %.1f | %.1f | %.1f MiB |\n",
            n, (b - a) / hz / (s1 - s0) * 100, rss / 1024, anon / 1024, file / 1024, hwm / 1024 }'
done
if [[ $TRAFFIC == 1 ]]; then
    echo
    echo "traffic: iperf3 $(grep -E 'bits/sec' "$WORK/iperf3.log" | tail -n 1 | awk '{ print $7, $8 }' || true) (its last second)"
    echo "traffic: http $(grep -iE 'requests/s|req/s' "$WORK/http.log" | tail -n 1 || true)"
fi
