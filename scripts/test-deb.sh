#!/bin/bash
# make test-deb: cordon's Debian packages (build/deb/, from make deb)
# installed into a fresh copy of a Debian 12 root made by debootstrap
# (scripts/debian-root.sh: cached by its recipe; it holds cordon's run-time
# packages, so dpkg needs no network), `cordon run -- true` and a run with
# a report there, an upgrade (the same packages again), and a purge that
# leaves the root as it was. In a private mount namespace: nothing of it
# reaches the host's mounts. Skips (exit 0, said) where the root cannot be
# made; under CI a skip is a failure.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
DEBS=${DEB_OUT:-$TOP/build/deb}
skip() {
	echo "test-deb: skipped: $*"
	[ -z "${CI:-}" ] || { echo "test-deb: under CI a skip is a failure" >&2; exit 1; }
	exit 0
}
ls "$DEBS"/cordon_*.deb >/dev/null 2>&1 || skip "no packages in $DEBS (make deb)"
[ "$(id -u)" = 0 ] || skip "needs root"
ROOT=$(bash "$TOP/scripts/debian-root.sh") || skip "no Debian root (scripts/debian-root.sh)"
W=$(mktemp -d /var/tmp/cordon-test-deb.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp -a "$ROOT" "$W/root"
mkdir -p "$W/root/tmp/debs"
cp "$DEBS"/cordon_*.deb "$DEBS"/libcordon0_*.deb "$DEBS"/libcordon-dev_*.deb "$DEBS"/python3-cordon_*.deb "$W/root/tmp/debs/"
snapshot() { (cd "$W/root" && find . -xdev \( -path ./tmp -o -path ./.oldroot -o -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./var/log -o -path ./var/lib/dpkg -o -path ./var/cache/debconf -o -path ./var/cache/ldconfig \) -prune -o -print | sort); }
snapshot >"$W/before"
# the steps inside, in a mount namespace of their own
# (pivot_root, not chroot: the kernel refuses a user namespace to a
# chrooted process, and cordon makes one)
cat >"$W/root/tmp/inside.sh" <<'STEPS'
set -euo pipefail
umount -l /.oldroot && rmdir /.oldroot
mkdir -p /tmp/task && cd /tmp/task
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
dpkg -i /tmp/debs/*.deb >/dev/null
cordon --version
cordon run -- true
cordon run --report /tmp/r.json -- /bin/sh -c 'echo hi from the package'
grep -q '"status": *"ok"' /tmp/r.json || { echo "test-deb: the report: $(head -c 300 /tmp/r.json)" >&2; exit 1; }
python3 -c 'import cordon; print("python3-cordon", cordon.__version__)'
test -f /usr/lib/x86_64-linux-gnu/pkgconfig/cordon.pc
test -f /usr/include/cordon.h
test -f /lib/systemd/system/cordon-serve.socket
dpkg -i /tmp/debs/*.deb >/dev/null # the upgrade path (the same version again)
cordon run -- true
dpkg --purge python3-cordon libcordon-dev cordon libcordon0 >/dev/null
cd / && rm -rf /tmp/r.json /tmp/task
STEPS
unshare -m --propagation private bash -euo pipefail -c '
R=$1
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"; mount --rbind /sys "$R/sys"; mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
cd "$R" && mkdir -p .oldroot && pivot_root . .oldroot
exec /usr/bin/env -i /bin/bash /tmp/inside.sh' _ "$W/root"
rm -f "$W/root/tmp/inside.sh"
rm -rf "$W/root/tmp/debs"
snapshot >"$W/after"
if ! diff -u "$W/before" "$W/after" >"$W/diff"; then
	echo "test-deb: the purge left the root changed:" >&2
	grep '^[-+]\./' "$W/diff" | head -30 >&2
	exit 1
fi
echo "test-deb: installed, ran, upgraded and purged cleanly in a fresh Debian root"
