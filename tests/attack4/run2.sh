#!/bin/bash
# Attack 4b on broker3, with the suite's own reflecting upstream
# (tests/tlsserver.py: it echoes Authorization as X-Echo, keep-alive): the
# run pads its Authorization so that the request head stays under 16 KiB but
# the response head (its echo plus the server's headers) passes it. The
# proxy's parser refuses that head and from then on relays the connection's
# responses raw, while it still swaps the value into the run's next
# requests: the next /echo/cl brings the real value to the run.
# Usage: [PAD=N] tests/attack4/run2.sh [BUILD]   (root; loopback only; PAD=100: the control, held)
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$TOP/build}
D=$(mktemp -d /tmp/atk4b.XXXXXX); chmod 755 "$D"; cd "$D"
VALUE=real-value-$RANDOM$RANDOM$RANDOM-x
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=atk-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 1 -extfile ext 2>/dev/null
mkdir -p www/pub && echo pub >www/pub/a.txt
/usr/bin/python3 "$TOP/tests/tlsserver.py" pf log srv.pem srv.key "$D/www" 2>up.err &
SRV=$!
for _ in $(seq 100); do [ -s pf ] && break; sleep 0.05; done
PORT=$(cat pf)
cat >p.json <<JSON
{"network": {"allow": ["localhost:$PORT"], "upstream_ca": "$D/ca.pem"},
 "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["localhost:$PORT"], "placeholder": "ghp_"}}}}
JSON
# (into a workspace file: the run's stdout is redacted, its files are not)
HOST_TOKEN=$VALUE "$BUILD/cordon" run --report rep.json --ro "$TOP" --policy p.json -- \
	/bin/sh -c "python3 $TOP/tests/attack4/twoclient.py $PORT ${PAD:-16200} >out" 2>run.err
kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
echo "workdir $D (value $VALUE)"
grep -aoE "auth=Bearer [^ ]{0,40}" out | head -2
if grep -qaF "$VALUE" out; then echo "LEAK: the real value reached the run"; else echo "held"; fi
