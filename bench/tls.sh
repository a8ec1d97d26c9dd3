#!/bin/bash
# make bench: TLS interception (issue 16). An HTTPS server on 127.0.0.1 with a
# CA made here; a Python client inside cordon run through the proxy, against
# the same server through an opaque CONNECT tunnel (a plain host rule):
#   - a 1 GiB download (BENCH_TLS_BYTES), MB/s, intercepted vs opaque, and
#     intercepted with a secret injected to the host (every response body
#     then goes through the filter that swaps an echoed value back, and a
#     Content-Length body is re-chunked);
#   - a small GET on a new connection each time and on one keep-alive
#     connection (BENCH_TLS_REQS requests), median microseconds per request.
# Rounds alternate (BENCH_TLS_ROUNDS); figures are medians of the rounds.
set -euo pipefail
BUILD=${1:-build}
C="$BUILD/cordon"
BYTES=${BENCH_TLS_BYTES:-1073741824}
REQS=${BENCH_TLS_REQS:-200}
ROUNDS=${BENCH_TLS_ROUNDS:-3}
ws=$(mktemp -d /tmp/cordon-bench-tls.XXXXXX)
chmod 755 "$ws"
trap 'kill $srv 2>/dev/null; rm -rf "$ws"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$ws/ca.key" -out "$ws/ca.pem" \
	-days 1 -subj /CN=bench-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$ws/srv.key" -out "$ws/srv.csr" \
	-subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost\n' >"$ws/ext"
openssl x509 -req -in "$ws/srv.csr" -CA "$ws/ca.pem" -CAkey "$ws/ca.key" -CAcreateserial -out "$ws/srv.pem" \
	-days 1 -extfile "$ws/ext" 2>/dev/null
cat >"$ws/srv.py" <<'PY'
import http.server, os, socketserver, ssl, sys
size = int(sys.argv[4])
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
    def do_GET(self):
        n = size if self.path == "/big" else 2
        self.send_response(200); self.send_header("Content-Length", str(n)); self.end_headers()
        chunk = memoryview(b"z" * (1 << 20))
        while n:
            k = min(n, len(chunk)); self.wfile.write(chunk[:k]); n -= k
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
srv = S(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(sys.argv[1] + ".tmp", "w").write(str(srv.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
PY
cat >"$ws/cli.py" <<'PY'
import http.client, ssl, sys, time
mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ctx = ssl.create_default_context(cafile=sys.argv[4]) if len(sys.argv) > 4 else ssl.create_default_context()
def conn():
    c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx)
    c.set_tunnel("localhost", port)
    return c
if mode == "fetch":
    c = conn(); t = time.monotonic(); c.request("GET", "/big"); r = c.getresponse(); got = 0
    while True:
        d = r.read(1 << 20)
        if not d: break
        got += len(d)
    print("%.0f" % (got / (time.monotonic() - t) / 1e6))
else:
    ts = []
    c = conn() if mode == "keepalive" else None
    for _ in range(n):
        t = time.monotonic()
        if mode == "new":
            c = conn()
        c.request("GET", "/small"); c.getresponse().read()
        if mode == "new":
            c.close()
        ts.append(time.monotonic() - t)
    ts.sort(); print("%.0f" % (ts[len(ts) // 2] * 1e6))
PY
chmod 644 "$ws"/*.py "$ws"/ca.pem
python3 "$ws/srv.py" "$ws/port" "$ws/srv.pem" "$ws/srv.key" "$BYTES" &
srv=$!
for _ in $(seq 100); do [ -s "$ws/port" ] && break; sleep 0.05; done
P=$(cat "$ws/port")
cat >"$ws/open.json" <<JSON
{"network": {"allow": [{"host": "localhost:$P", "methods": ["GET"]}], "upstream_ca": "$ws/ca.pem"}}
JSON
echo "{\"network\": {\"allow\": [\"localhost:$P\"]}}" >"$ws/tunnel.json"
cat >"$ws/inject.json" <<JSON
{"network": {"allow": [{"host": "localhost:$P", "methods": ["GET"]}], "upstream_ca": "$ws/ca.pem"},
 "secrets": {"TOKEN": {"env": "BENCH_TLS_TOKEN", "inject": {"hosts": ["localhost:$P"]}}}}
JSON
export BENCH_TLS_TOKEN=bench-token-0123456789abcdef
run() { "$C" run --ro "$ws" --policy "$ws/$1.json" -- python3 "$ws/cli.py" "${@:2}"; }
for _ in $(seq "$ROUNDS"); do
	run open fetch "$P" 1 >>"$ws/t.open"
	run tunnel fetch "$P" 1 "$ws/ca.pem" >>"$ws/t.tunnel"
	run inject fetch "$P" 1 >>"$ws/t.inject"
	run open new "$P" "$REQS" >>"$ws/n.open"
	run tunnel new "$P" "$REQS" "$ws/ca.pem" >>"$ws/n.tunnel"
	run open keepalive "$P" "$REQS" >>"$ws/k.open"
	run tunnel keepalive "$P" "$REQS" "$ws/ca.pem" >>"$ws/k.tunnel"
done
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
echo
echo "TLS interception, $ROUNDS alternating rounds (Python client in the run; $((BYTES >> 20)) MiB: MB/s; a GET: us, median)"
printf '%-46s %9s %9s %9s\n' "" "MB/s" "new conn" "keepalive"
for k in tunnel:"opaque CONNECT tunnel (client verifies)" open:"opened by the proxy (rules checked)"; do
	printf '%-46s %9s %9s %9s\n' "${k#*:}" "$(median <"$ws/t.${k%%:*}")" "$(median <"$ws/n.${k%%:*}")" "$(median <"$ws/k.${k%%:*}")"
done
printf '%-46s %9s %9s %9s\n' "opened, a secret injected (bodies filtered)" "$(median <"$ws/t.inject")" - -
awk -v a="$(median <"$ws/t.open")" -v b="$(median <"$ws/t.tunnel")" \
	'BEGIN{printf "throughput ratio opened/opaque:                  %.2f (goal >= 0.50)\n", a/b}'
awk -v a="$(median <"$ws/t.inject")" -v b="$(median <"$ws/t.tunnel")" \
	'BEGIN{printf "throughput ratio opened+injected/opaque:         %.2f\n", a/b}'
awk -v a="$(median <"$ws/n.open")" -v b="$(median <"$ws/n.tunnel")" -v c="$(median <"$ws/k.open")" -v d="$(median <"$ws/k.tunnel")" \
	'BEGIN{printf "added latency per request: new connection %d us, keep-alive %d us\n", a-b, c-d}'
