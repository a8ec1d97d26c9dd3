#!/bin/bash
# PID 1 of the `make test-vm` guest (started by /sbin/cordon-vm-init from the
# image, with the tree disk at /mnt/cordon). Mounts what a systemd host has
# (pure cgroup v2 at /sys/fs/cgroup, tmpfs /tmp and /run), runs the chosen
# tests, prints "CORDON-VM-RESULT rc" and powers off. Arguments come from the
# kernel command line: cordon.tests=REGEX (empty: all).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
exec </dev/null >/dev/console 2>&1
mount -o remount,rw /
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev shm /dev/shm
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=755,nosuid,nodev run /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
ln -sfn /proc/self/fd /dev/fd
hostname cordon-vm
ip link set lo up
TREE=/mnt/cordon
tests=$(sed -n 's/.*cordon\.tests=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "cordon-vm: kernel $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)," \
	"landlock ABI $(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))'), $(nproc) CPUs"
start=$(date +%s)
cd "$TREE"
CORDON_TEST_SLOW=1 CORDON_TESTS=${tests//@/ } CORDON_LEAK_RUNS=${CORDON_LEAK_RUNS:-20} bash tests/run.sh "$TREE/build"
rc=$?
echo "cordon-vm: the suite took $(($(date +%s) - start)) s in the guest"
echo "CORDON-VM-RESULT $rc"
sync
mount -o remount,ro / 2>/dev/null
umount "$TREE" 2>/dev/null
echo o >/proc/sysrq-trigger
sleep 10
