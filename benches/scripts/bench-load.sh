#!/usr/bin/env bash
# The load launcher's budgets, side by side on loopback (127.0.0.1 only):
#   - `netlens load tcp` throughput vs iperf3 (each against its own server);
#   - `netlens load http` requests/s vs wrk, against the same nginx, with the
#     same connections and threads.
# Prints each figure and the ratios (netlens / reference; >= 1.00 meets the
# budget). Runs are interleaved (netlens, reference, netlens, ...) and repeated
# (ROUNDS, default 5); the medians are compared and the spread (min..max) is
# shown, so a burst of other work on the machine hurts both sides alike and
# shows up as spread. CPU figures are steadier than rates on a shared machine:
# for tcp, client + server CPU seconds per GB moved (server CPU from
# /proc/PID/stat); for http, client CPU per request (nginx is shared).
# Needs: iperf3 wrk nginx jq (apt-get install iperf3 wrk nginx jq).
# Usage: benches/scripts/bench-load.sh [seconds per run, default 5]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-5}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
for tool in iperf3 wrk nginx jq; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install iperf3 wrk nginx jq" >&2; exit 1; }
done
cargo build --release --quiet
NETLENS=${CARGO_TARGET_DIR:-target}/release/netlens

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; exit 1; }

# Servers: netlens' own, iperf3's own, and one nginx for both HTTP clients.
NL_PORT=$(free_port)
"$NETLENS" load serve --bind 127.0.0.1 --port "$NL_PORT" --duration 1h >/dev/null & PIDS+=($!)
IP_PORT=$(free_port)
iperf3 -s -B 127.0.0.1 -p "$IP_PORT" >/dev/null 2>&1 & PIDS+=($!)
NG_PORT=$(free_port)
mkdir -p "$WORK/www"
head -c 612 /dev/zero | tr '\0' x > "$WORK/www/index.html"
cat > "$WORK/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/body; proxy_temp_path $WORK/proxy;
  fastcgi_temp_path $WORK/fastcgi; uwsgi_temp_path $WORK/uwsgi; scgi_temp_path $WORK/scgi;
  server { listen 127.0.0.1:$NG_PORT; location / { root $WORK/www; } }
}
EOF
nginx -p "$WORK" -c "$WORK/nginx.conf" & PIDS+=($!)
wait_port "$NL_PORT"; wait_port "$IP_PORT"; wait_port "$NG_PORT"

# CPU seconds (user + system, all threads) a process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
NL_SERVE=${PIDS[0]}; IP_SERVE=${PIDS[1]}
for f in tcp_nl tcp_ip tcpcpu_nl tcpcpu_ip http_nl http_wrk cpu_nl cpu_wrk; do : > "$WORK/$f"; done
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
    s0=$(cpu_of "$NL_SERVE")
    /usr/bin/time -f '%U %S' -o "$WORK/cpu" "$NETLENS" load tcp --to "127.0.0.1:$NL_PORT" -t "$SECS" --json | tail -1 > "$WORK/out"
    s1=$(cpu_of "$NL_SERVE")
    jq '.bits_per_s' "$WORK/out" >> "$WORK/tcp_nl"
    awk -v b="$(jq '.bytes' "$WORK/out")" -v s0="$s0" -v s1="$s1" '{print ($1+$2+s1-s0)*1e9/b}' "$WORK/cpu" >> "$WORK/tcpcpu_nl"
    s0=$(cpu_of "$IP_SERVE")
    /usr/bin/time -f '%U %S' -o "$WORK/cpu" iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$SECS" -J > "$WORK/out"
    s1=$(cpu_of "$IP_SERVE")
    jq '.end.sum_received.bits_per_second' "$WORK/out" >> "$WORK/tcp_ip"
    awk -v b="$(jq '.end.sum_received.bytes' "$WORK/out")" -v s0="$s0" -v s1="$s1" '{print ($1+$2+s1-s0)*1e9/b}' "$WORK/cpu" >> "$WORK/tcpcpu_ip"
    # Client CPU time (user+sys) per request too: steadier than req/s on a
    # machine shared with other work.
    /usr/bin/time -f '%U %S' -o "$WORK/cpu" "$NETLENS" load http "http://127.0.0.1:$NG_PORT/index.html" \
        -c "$CONNS" --threads "$THREADS" -t "$SECS" --json | tail -1 > "$WORK/out"
    jq '.requests_per_s' "$WORK/out" >> "$WORK/http_nl"
    awk -v r="$(jq '.requests' "$WORK/out")" '{print ($1+$2)*1e6/r}' "$WORK/cpu" >> "$WORK/cpu_nl"
    /usr/bin/time -f '%U %S' -o "$WORK/cpu" wrk -c "$CONNS" -t "$THREADS" -d "${SECS}s" \
        "http://127.0.0.1:$NG_PORT/index.html" > "$WORK/out"
    awk '/^Requests\/sec:/ {print $2}' "$WORK/out" >> "$WORK/http_wrk"
    awk -v r="$(awk '/requests in/ {print $1}' "$WORK/out")" '{print ($1+$2)*1e6/r}' "$WORK/cpu" >> "$WORK/cpu_wrk"
    echo "round $round done" >&2
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
# "median min max" of a file of numbers, each divided by $2.
stats() { sort -g "$1" | awk -v d="$2" '{v[NR]=$1/d} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.6g %.6g %.6g", m, v[1], v[NR]}'; }
read -r TN TNa TNb <<< "$(stats "$WORK/tcp_nl" 1e9)"; read -r TI TIa TIb <<< "$(stats "$WORK/tcp_ip" 1e9)"
read -r CN CNa CNb <<< "$(stats "$WORK/tcpcpu_nl" 1)"; read -r CI CIa CIb <<< "$(stats "$WORK/tcpcpu_ip" 1)"
read -r HN HNa HNb <<< "$(stats "$WORK/http_nl" 1)"; read -r HW HWa HWb <<< "$(stats "$WORK/http_wrk" 1)"
read -r PN PNa PNb <<< "$(stats "$WORK/cpu_nl" 1)"; read -r PW PWa PWb <<< "$(stats "$WORK/cpu_wrk" 1)"
echo "median (min..max) of $ROUNDS interleaved runs of ${SECS}s on 127.0.0.1; load average before $LOAD_BEFORE, after $LOAD_AFTER (2 cores: above ~1 the machine is shared)"
awk -v tn="$TN" -v ti="$TI" -v cn="$CN" -v ci="$CI" -v hn="$HN" -v hw="$HW" -v pn="$PN" -v pw="$PW" \
    -v r1="$TNa..$TNb" -v r2="$TIa..$TIb" -v r3="$CNa..$CNb" -v r4="$CIa..$CIb" \
    -v r5="$HNa..$HNb" -v r6="$HWa..$HWb" -v r7="$PNa..$PNb" -v r8="$PWa..$PWb" -v k="$CONNS" -v t="$THREADS" 'BEGIN {
    printf "tcp   netlens %6.2f Gbit/s (%s)   iperf3 %6.2f Gbit/s (%s)   ratio %.2f\n", tn, r1, ti, r2, tn/ti
    printf "tcp   CPU s per GB, client+server: netlens %.3f (%s)   iperf3 %.3f (%s)   ratio %.2f (lower is better)\n", cn, r3, ci, r4, ci/cn
    printf "http  netlens %8.0f req/s (%s)   wrk %8.0f req/s (%s)   ratio %.2f  (%d connections, %d threads, nginx)\n", hn, r5, hw, r6, hn/hw, k, t
    printf "http  client CPU per request: netlens %.2f us (%s)   wrk %.2f us (%s)   ratio %.2f (lower is better)\n", pn, r7, pw, r8, pw/pn
}'
