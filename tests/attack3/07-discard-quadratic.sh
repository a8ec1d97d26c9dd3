#!/bin/sh
# Finding: rolling back an interrupted apply (cordon discard) parses the
# journal with sscanf at each record (lib/changeset.c: parse_journal);
# glibc's sscanf takes strlen of the whole remaining text each call, so the
# parse is O(records x journal bytes). Records carry the full relative path
# (up to 16 KiB), which the run chooses: N files of 255-byte names below a
# ~3.8 KiB directory chain make a journal of N x ~4 KiB; its rollback
# then scans ~N^2 x 2 KiB. (The 256 MiB cap on the journal, once passed,
# makes the rollback impossible instead: EFBIG.)
# Measured here: N=3000 (12 MB journal) 3.5 s, N=12000 (48 MB) 34 s; the
# cap (256 MiB, ~65,000 such records) extrapolates to ~15 min, 200,000
# shorter records to hours.
# Usage (root): sh 07-discard-quadratic.sh [CORDON] [N]
set -u
CORDON=${1:-/work/wt/atk-ovl/build/cordon}
N=${2:-6000}
T=$(mktemp -d /tmp/atk-dq.XXXXXX)
mkdir -p "$T/ws" && cd "$T/ws" || exit 1
"$CORDON" run --report "$T/rep.json" --workspace-mode review -- python3 -c "
import os
p = '/'.join(['d' * 250] * 15)
os.makedirs(p)
for i in range($N):
    open(p + '/' + ('%05d' % i) + 'f' * 250, 'w').close()" || exit 1
d=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$T/rep.json")
"$CORDON" apply --test-apply-crash-after $((N - 1)) "$d" 2>/dev/null
echo "apply killed (rc=$?); journal $(stat -c %s "$d/journal") bytes"
s=$(date +%s.%N)
timeout 600 "$CORDON" discard "$d"; echo "discard rc=$?"
e=$(date +%s.%N)
python3 -c "import sys;s,e=map(float,sys.argv[1:3]);print('discard took %.1f s' % (e-s))" "$s" "$e"
rm -rf "$T"
