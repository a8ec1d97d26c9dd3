#!/bin/sh
# make demo: run examples/hello under the default boundary (plus the limits of
# its policy) in a scratch copy, then print the run report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
# The scratch workspace, and the change sets cordon keeps beside it, go when
# the demo ends (CORDON_DEMO_KEEP=1 keeps them).
base=$(mktemp -d "${TMPDIR:-/tmp}/cordon-demo.XXXXXX")
[ "${CORDON_DEMO_KEEP:-0}" = 1 ] || trap 'rm -rf "$base"' EXIT
ws=$base/hello
mkdir "$ws"
cp -r "$top/examples/hello/." "$ws/"
cd "$ws"
echo "== cordon run --policy policy.json -- ./task/main.sh   (workspace: $ws)"
rc=0
"$build/cordon" run --policy policy.json --report report.json -- ./task/main.sh || rc=$?
echo "== exit status $rc; run report:"
cat report.json
echo "== the run wrote out/result.txt = $(cat out/result.txt) (the workspace $ws is removed now; CORDON_DEMO_KEEP=1 keeps it)"
