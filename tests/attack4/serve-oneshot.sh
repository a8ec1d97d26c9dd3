#!/bin/bash
# serve3: a warm one-shot run (POST /v1/runs from the pool) vs a cold one:
# output the client does not get, and the report's account of it.
# Usage: serve-oneshot.sh [BUILD]   (root)
TOP=$(cd "$(dirname "$0")/../.." && pwd); BUILD=${1:-$TOP/build}
D=$(mktemp -d /tmp/atk4s.XXXXXX); chmod 755 "$D"; cd "$D"
SOCK=$D/s.sock
"$BUILD/cordon" serve --socket "$SOCK" --state-dir "$D/st" --warm 1 2>serve.log &
SRV=$!
api() { curl -sS --unix-socket "$SOCK" --max-time 120 "$@"; }
for _ in $(seq 200); do [ "$(api http://cordon/v1/pool 2>/dev/null | jq -r '.ready // 0')" -ge 1 ] 2>/dev/null && break; sleep 0.1; done
api http://cordon/v1/pool; echo
N=$((12 << 20))
for how in warm cold; do
	pol=""; [ $how = cold ] && pol=',"policy":{"limits":{"pids":512}}'
	api -X POST http://cordon/v1/runs -d "{\"argv\":[\"sh\",\"-c\",\"head -c $N /dev/zero | tr '\\\\\\\\0' x\"]$pol}" >$how.json
	got=$(jq -r .run.stdout_b64 $how.json | base64 -d | wc -c)
	echo "$how: warm=$(jq -r '.session.warm // false' $how.json) wrote $N, client got $got, truncated=$(jq -r '.run.stdout_truncated // false' $how.json)," \
		"report stdout=$(jq -c '.stdout' $how.json), exec dropped=$(jq -r '.execs[0].dropped_bytes // "-"' $how.json)" \
		"exec stdout=$(jq -c '.execs[0].stdout // "-"' $how.json)"
	for _ in $(seq 100); do [ "$(api http://cordon/v1/pool | jq -r '.ready // 0')" -ge 1 ] && break; sleep 0.1; done
done
kill $SRV; wait $SRV
