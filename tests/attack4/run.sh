#!/bin/bash
# Attack 4 on broker3's response echo filter: a hostile (or merely
# reflecting) upstream gets the injected value to the run whenever its
# response is something the strict parser refuses: the proxy then relays
# the rest of the connection raw (pxhttp_upstream, H1_ERR -> resp_opaque).
# Usage: tests/attack4/run.sh [BUILD]   (root; loopback only)
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$TOP/build}
CORDON=$BUILD/cordon
D=$(mktemp -d /tmp/atk4.XXXXXX)
cd "$D"
VALUE=real-value-$RANDOM$RANDOM$RANDOM-x
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=atk-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 1 -extfile ext 2>/dev/null
/usr/bin/python3 "$TOP/tests/attack4/evilup.py" pf srv.pem srv.key 2>up.err &
SRV=$!
for _ in $(seq 100); do [ -s pf ] && break; sleep 0.05; done
PORT=$(cat pf)
cat >p.json <<JSON
{"network": {"allow": ["localhost:$PORT"], "upstream_ca": "$D/ca.pem"},
 "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": {"hosts": ["localhost:$PORT"], "placeholder": "ghp_"}}}}
JSON
RC="$TOP/tests/attack4/rawclient.py"
PAD=$(head -c 16000 /dev/zero | tr '\0' a)
HOST_TOKEN=$VALUE "$CORDON" run --report rep.json --ro "$TOP" --policy p.json -- /bin/sh -c "
	python3 $RC $PORT /ok >ok.out
	python3 $RC $PORT /bigloc?$PAD >bigloc.out
	python3 $RC $PORT /badcl >badcl.out
	python3 $RC $PORT /head HEAD >head.out
	python3 $RC $PORT /extra >extra.out
	python3 $RC $PORT /badchunk >badchunk.out
	python3 $RC $PORT /gzip >gzip.out
	python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.decompress(open(\"gzip.out\",\"rb\").read().split(b\"\r\n\r\n\",1)[1]))' >gunzip.out 2>/dev/null
	true" >/dev/null 2>run.err
kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
echo "workdir $D  (value $VALUE)"
for f in ok bigloc badcl head extra badchunk gzip gunzip; do
	if grep -qaF "$VALUE" $f.out 2>/dev/null; then echo "LEAK  $f: the real value reached the run"
	elif [ "$f" = badchunk ] && grep -qaF "${VALUE:$(( ${#VALUE} / 2 + 3 ))}" $f.out; then echo "LEAK  $f: the value's second half reached the run raw"
	else echo "held  $f"; fi
done
