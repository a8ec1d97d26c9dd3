#!/bin/bash
# `make test-vm`: cordon's integration suite on Debian 12's own kernel (6.1,
# Landlock ABI 2, pure cgroup v2, tmpfs without idmapped mounts) under qemu.
#   scripts/vm/run.sh BUILD [TESTS-REGEX]
# The guest image is built once per recipe (scripts/vm/image.sh) in
# $CORDON_VM_CACHE (default /var/cache/cordon-vm); cordon is built on the host
# (the same Debian 12 userland) and goes in on a second disk with the tests.
# Ends with the suite's "N passed, N failed, N skipped" line; exit 0 on pass.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
TESTS=${2-${CORDON_VM_TESTS-}}
TIMEOUT=${CORDON_VM_TIMEOUT:-2400}
IMG=$(bash "$TOP/scripts/vm/image.sh")
WORK=$(mktemp -d /tmp/cordon-vm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# The tree disk: tests, schemas and scripts, what tests read of the source
# tree (meson.build: the version; clients/, deploy/; README, SECURITY.md, NEWS.md and docs/: their tables and links; the
# header, the man pages' sources, the examples, the Python package), and the
# host's build.
mkdir -p "$WORK/tree/build"
cp -r "$TOP/tests" "$TOP/schemas" "$TOP/scripts" "$TOP/meson.build" "$TOP/clients" "$TOP/deploy" "$TOP/README.md" "$TOP/SECURITY.md" "$TOP/NEWS.md" "$TOP/docs" "$TOP/include" "$TOP/man" "$TOP/examples" \
	"$TOP/python" "$WORK/tree/"
find "$WORK/tree/python" -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || true
# The programs and the shared library with its links (the programs find it
# by their RUNPATH, $ORIGIN).
find "$BUILD" -maxdepth 1 \( -type f -perm -u+x -o -type l \) -exec cp -P -t "$WORK/tree/build" {} +
mkfs.ext4 -q -F -L cordon-tree -d "$WORK/tree" "$WORK/tree.ext4" 256M >&2
# Software emulation (TCG) on two threads. CORDON_VM_KVM=1 asks for KVM
# first: on this machine /dev/kvm opens but a guest never gets to its first
# console line, so it is not the default.
accel="-accel tcg,thread=multi"
[ "${CORDON_VM_KVM:-0}" = 1 ] && [ -w /dev/kvm ] && accel="-accel kvm $accel"
echo "cordon-vm: booting $(basename "$IMG"/vmlinuz) ($accel) with tests: ${TESTS:-all}" >&2
start=$(date +%s)
# Spaces cannot be on the kernel command line: the regex carries them as @.
set +e
timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 $accel -smp 2 -m 2048 -nographic -no-reboot -nic none \
	-kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
	-drive file="$IMG/root.ext4",format=raw,if=virtio,snapshot=on \
	-drive file="$WORK/tree.ext4",format=raw,if=virtio \
	-append "root=/dev/vda rw console=ttyS0 quiet cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 panic=-1 init=/sbin/cordon-vm-init cordon.tests=${TESTS// /@}" \
	</dev/null | sed -u 's/\r$//' | tee "$WORK/console.log"
qrc=${PIPESTATUS[0]}
set -e
echo "cordon-vm: qemu exited $qrc after $(($(date +%s) - start)) s" >&2
rc=$(sed -n 's/^CORDON-VM-RESULT \([0-9]*\)$/\1/p' "$WORK/console.log" | tail -1)
[ -n "$rc" ] || { echo "cordon-vm: the guest did not finish (qemu $qrc; timeout ${TIMEOUT}s)" >&2; exit 1; }
exit "$rc"
