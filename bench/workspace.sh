#!/bin/bash
# make bench, workspace modes (issue 17): cordon run -- /bin/true in an empty
# workspace and in one of 50,000 files, direct and overlay, in alternating
# rounds (drift in the VM's speed falls on every row alike; the figure is the
# median of the round medians), then the time cordon apply takes for a change
# set of 1,000 new files.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
C="$BUILD/cordon"
S="$BUILD/bench-spawn"
ROUNDS=${BENCH_WS_ROUNDS:-5}
PER=${BENCH_WS_RUNS:-20}
FILES=${BENCH_WS_FILES:-50000}
top=$(mktemp -d /tmp/cordon-bench-ws.XXXXXX)
trap 'rm -rf "$top"' EXIT
# Each workspace has its own parent: its change sets go there.
mkdir -p "$top/e/ws" "$top/f/ws"
python3 - "$top/f/ws" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for d in range(n // 500):
    p = os.path.join(root, "d%03d" % d)
    os.mkdir(p)
    for i in range(500):
        with open(os.path.join(p, "f%03d" % i), "w") as f:
            f.write("x" * 64)
PY
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
rows=("e direct" "e overlay" "f direct" "f overlay")
for _ in $(seq "$ROUNDS"); do
	for r in "${rows[@]}"; do
		set -- $r
		(cd "$top/$1/ws" && "$S" "$PER" "$C" run --workspace-mode "$2" -- /bin/true) | cut -d' ' -f1 >>"$top/t.$1.$2"
	done
done
echo
echo "workspace modes: cordon run -- /bin/true, $ROUNDS alternating rounds of $PER runs (ms, median of round medians)"
for r in "${rows[@]}"; do
	set -- $r
	printf '%-46s %9s\n' "$([ "$1" = e ] && echo "empty workspace" || echo "$FILES files"), $2" "$(median <"$top/t.$1.$2")"
done
eo=$(median <"$top/t.e.overlay"); fo=$(median <"$top/t.f.overlay"); fd=$(median <"$top/t.f.direct")
awk -v a="$fo" -v b="$eo" 'BEGIN{printf "overlay, %s files / empty:                   %.2f (goal <= 1.10)\n", "'"$FILES"'", a/b}'
awk -v a="$fd" -v b="$fo" 'BEGIN{printf "direct / overlay in %s files:               %.2f\n", "'"$FILES"'", a/b}'
# Applying a change set of 1,000 new files (review, then cordon apply).
for _ in $(seq "$ROUNDS"); do
	rm -rf "$top/a" && mkdir -p "$top/a/ws"
	(cd "$top/a/ws" && "$C" run --report "$top/r.json" --workspace-mode review -- /usr/bin/python3 -c '
for i in range(1000):
    open("f%04d" % i, "w").write("y" * 128)
' >/dev/null)
	d=$(jq -r .changes.dir "$top/r.json")
	a=$(date +%s%N)
	"$C" apply "$d"
	b=$(date +%s%N)
	echo $(((b - a) / 1000)) >>"$top/apply"
done
printf '%-46s %9s\n' "cordon apply, 1,000 new files (us, median)" "$(median <"$top/apply")"
