#!/bin/sh
# Finding: the apply at the end of an overlay run costs one or two
# journal fdatasyncs (plus an fsync) per directory of the change set, and
# no limit of the run covers it: the run makes N empty-ish directories in a
# few seconds, the (root) supervisor then spends ~15-20 ms per directory
# on this VM applying them (3000: ~55 s; the 200,000-entry bound: ~30 min),
# with the host half-applied all along. lib/changeset.c: apply_dir_entry
# (journal() = fdatasync per directory) and flush() (one per directory
# holding files).
# Usage (root): sh 04-apply-time.sh [CORDON] [N]
set -u
CORDON=${1:-/work/wt/atk-ovl/build/cordon}
N=${2:-2000}
T=$(mktemp -d /tmp/atk-at.XXXXXX)
mkdir -p "$T/ws" && cd "$T/ws" || exit 1
s=$(date +%s.%N)
"$CORDON" run --report "$T/rep.json" --workspace-mode review -- python3 -c "
import os
for i in range($N):
    os.mkdir('d%d' % i); open('d%d/f' % i, 'w').close()" || exit 1
m=$(date +%s.%N)
d=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$T/rep.json")
"$CORDON" apply "$d" || exit 1
e=$(date +%s.%N)
python3 - "$s" "$m" "$e" "$N" <<'PY'
import sys
s, m, e, n = map(float, sys.argv[1:])
print("run %.1f s, apply %.1f s for %d dirs+files; per dir %.1f ms; 100,000 dirs + 100,000 files (the bound): ~%.0f min"
      % (m - s, e - m, n, (e - m) / n * 1000, (e - m) / n * 100000 / 60))
PY
rm -rf "$T"
