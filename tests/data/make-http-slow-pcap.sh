#!/usr/bin/env bash
# Records tests/data/http-slow.pcap from real traffic: a plain HTTP/1.1
# server whose handler takes 120 ms, answering three keep-alive requests
# (GET /slow/1..3) from a client in another network namespace this script
# creates (198.18.9.1 client, 198.18.9.2 server, on a veth pair), captured
# by `netlens capture -w` on the server's end. The flow screen's test
# reads its "server time" from this file. Needs root and python3; removes
# what it creates.
# Usage: tests/data/make-http-slow-pcap.sh [OUT, default tests/data/http-slow.pcap]
# (NETLENS=path/to/netlens uses a build already made.)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-tests/data/http-slow.pcap}
. tests/data/netns-pair.sh

"$NETLENS" --netns "$B" capture -i veth-b -f "tcp port 9002" -w "$OUT" --duration 20s 2>/dev/null &
CAP=$!
sleep 0.5
ip netns exec "$B" timeout 10 python3 -c '
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.120)
        body = b"x" * 100
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("198.18.9.2", 9002), H)
s.handle_request()
' &
SERVER=$!
sleep 0.5
ip netns exec "$A" timeout 10 python3 -c '
import http.client
c = http.client.HTTPConnection("198.18.9.2", 9002, timeout=5)
for i in (1, 2, 3):
    c.request("GET", "/slow/%d" % i)
    c.getresponse().read()
c.close()
'
wait "$SERVER"
sleep 0.3
kill -TERM "$CAP"
wait "$CAP" || true
CAP=
echo "$OUT: $("$NETLENS" read "$OUT" | wc -l) packets"
"$NETLENS" read "$OUT" --flows
