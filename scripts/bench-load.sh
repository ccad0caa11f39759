#!/usr/bin/env bash
# The load launcher's budgets, side by side on loopback (127.0.0.1 only):
#   - `netlens load tcp` throughput vs iperf3 (each against its own server);
#   - `netlens load http` requests/s vs wrk, against the same nginx, with the
#     same connections and threads.
# Prints each figure and the ratios (netlens / reference; >= 1.00 meets the
# budget). Runs alternate and repeat (ROUNDS, default 3) and the best of each
# is compared, so a burst of other work on the machine hurts both sides alike.
# Needs: iperf3 wrk nginx jq (apt-get install iperf3 wrk nginx jq).
# Usage: scripts/bench-load.sh [seconds per run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
ROUNDS=${ROUNDS:-3}
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

best() { sort -g | tail -1; }
: > "$WORK/tcp_nl"; : > "$WORK/tcp_ip"; : > "$WORK/http_nl"; : > "$WORK/http_wrk"
: > "$WORK/cpu_nl"; : > "$WORK/cpu_wrk"
for round in $(seq "$ROUNDS"); do
    "$NETLENS" load tcp --to "127.0.0.1:$NL_PORT" -t "$SECS" --json | tail -1 | jq '.bits_per_s' >> "$WORK/tcp_nl"
    iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$SECS" -J | jq '.end.sum_received.bits_per_second' >> "$WORK/tcp_ip"
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
TCP_NL=$(best < "$WORK/tcp_nl"); TCP_IP=$(best < "$WORK/tcp_ip")
HTTP_NL=$(best < "$WORK/http_nl"); HTTP_WRK=$(best < "$WORK/http_wrk")
least() { sort -g | head -1; }
CPU_NL=$(least < "$WORK/cpu_nl"); CPU_WRK=$(least < "$WORK/cpu_wrk")
awk -v a="$TCP_NL" -v b="$TCP_IP" -v c="$HTTP_NL" -v d="$HTTP_WRK" -v e="$CPU_NL" -v f="$CPU_WRK" -v n="$ROUNDS" -v s="$SECS" -v k="$CONNS" -v t="$THREADS" 'BEGIN {
    printf "best of %d runs of %ds on 127.0.0.1\n", n, s
    printf "tcp   netlens %7.2f Gbit/s   iperf3 %7.2f Gbit/s   ratio %.2f\n", a/1e9, b/1e9, a/b
    printf "http  netlens %9.0f req/s   wrk    %9.0f req/s   ratio %.2f  (%d connections, %d threads, nginx)\n", c, d, c/d, k, t
    printf "http client CPU per request: netlens %.1f us   wrk %.1f us   (lower is better; least of %d)\n", e, f, n
}'
