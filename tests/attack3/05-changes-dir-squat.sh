#!/bin/sh
# Finding (low): any local user who can write the workspace's parent (/tmp,
# a shared project directory) pre-creates .cordon-changes (root's) or
# .cordon-changes-UID (another user's) as their own; make_dir refuses it
# (right), and the run silently falls back to direct mode (the default mode
# was not "asked"): the overlay's guarantees (no write reaches the host
# before the end, protected names held back at the apply) are gone for
# every run there, said only in enforcement.workspace_mode_reason.
# Usage (root): sh 05-changes-dir-squat.sh [CORDON]
set -u
CORDON=${1:-/work/wt/atk-ovl/build/cordon}
T=$(mktemp -d /tmp/atk-sq.XXXXXX)
chmod 1777 "$T"
mkdir "$T/ws"
runuser -u nobody -- mkdir -m 755 "$T/.cordon-changes"
cd "$T/ws" && "$CORDON" run --report "$T/rep.json" -- true
python3 -c "import json,sys;e=json.load(open(sys.argv[1]))['enforcement'];print(e['workspace_mode'], '|', e.get('workspace_mode_reason'))" "$T/rep.json"
m=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['enforcement']['workspace_mode'])" "$T/rep.json")
rm -rf "$T"
[ "$m" = direct ] && { echo "VULNERABLE (downgrade): a local user's directory turned overlay off"; exit 1; }
echo held
