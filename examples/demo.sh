#!/bin/sh
# make demo: run examples/hello under the default boundary (plus the limits of
# its policy) in a scratch copy, then print the run report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
ws=$(mktemp -d /tmp/cordon-demo.XXXXXX)
cp -r "$top/examples/hello/." "$ws/"
cd "$ws"
echo "== cordon run --policy policy.json -- ./task/main.sh   (workspace: $ws)"
rc=0
"$top/build/cordon" run --policy policy.json --report report.json -- ./task/main.sh || rc=$?
echo "== exit status $rc; run report:"
cat report.json
echo "== the workspace keeps the outputs: $ws/out/result.txt = $(cat out/result.txt)"
