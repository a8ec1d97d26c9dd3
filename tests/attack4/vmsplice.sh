#!/bin/bash
# The report's stdout sha256 vs what the reader of cordon's stdout got, when
# the run puts pages in its stdout pipe by reference (vmsplice, or splice
# from its own file) and rewrites them after the supervisor hashed them:
# tee(2) passes the page references on. Usage: vmsplice.sh [BUILD]
TOP=$(cd "$(dirname "$0")/../.." && pwd); BUILD=${1:-$TOP/build}
D=$(mktemp -d /tmp/atk4v.XXXXXX); chmod 755 "$D"; cd "$D"
gcc -O2 -o vms "$TOP/tests/attack4/vmsplice.c" || exit 1
for how in mem file; do
	"$BUILD/cordon" run --report rep.json --ro "$D" -- "$D/vms" $([ $how = file ] && echo file) | (sleep 1.5; cat) >got
	echo "$how: delivered $(head -c 4 got)... sha256 $(sha256sum <got | cut -c1-16); report stdout sha256 $(jq -r .stdout.sha256 rep.json | cut -c1-16)"
done
