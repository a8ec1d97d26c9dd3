#!/bin/bash
# bench/oci.sh [BUILD]: `podman run --rm IMAGE true` with build/cordon-oci
# beside the same with crun (issue 31: goal, cordon-oci within 1.2x of crun),
# wall-clock, in interleaved runs (cordon-oci, crun, cordon-oci, ...: drift
# in the machine's speed falls on both alike); the figure is the ratio of
# the medians. make bench runs it where build/cordon-oci exists.
#   BENCH_OCI_RUNS=N   runs of each (default 30)
#   OCI_CRUN=PATH      crun (default: on PATH)
# podman as in tests/integration/95-oci-engines.sh: private storage (vfs),
# the cgroupfs manager, file events, --network none, an image imported from
# a busybox rootfs made here. On a hybrid cgroup host crun runs in a private
# mount namespace with the cgroup2 mount hidden (scripts/oci-hybrid-ns.sh:
# one unshare and one sh exec more per runtime call, which its figure
# includes).
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_OCI_RUNS:-30}
CORDON_OCI=$BUILD/cordon-oci
CRUN=${OCI_CRUN:-$(command -v crun || true)}
for need in "$CORDON_OCI" "$CRUN" "$(command -v podman || true)" "$(command -v busybox || true)"; do
	[ -n "$need" ] && [ -x "$need" ] || { echo "bench/oci.sh: skipped (needs $BUILD/cordon-oci, crun, podman and busybox)"; exit 0; }
done
[ "$(id -u)" = 0 ] || { echo "bench/oci.sh: skipped (needs root)"; exit 0; }

D=$(mktemp -d /tmp/cordon-bench-oci.XXXXXX)
chmod 755 "$D"
cleanup() {
	pm cordon-oci rm -a -f -t 0 >/dev/null 2>&1 || true
	awk -v w="$D/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$D"
}
trap cleanup EXIT
cd "$D"

wrap=""
if awk '$5 == "/sys/fs/cgroup/unified" && $9 == "cgroup2" {f=1} END {exit !f}' /proc/self/mountinfo; then
	wrap=$(printf '%q ' "$TOP/scripts/oci-hybrid-ns.sh")
fi
printf '#!/bin/sh\nexec %q "$@"\n' "$CORDON_OCI" >"$D/cordon-oci"
printf '#!/bin/sh\nexec %s%q "$@"\n' "$wrap" "$CRUN" >"$D/crun"
chmod 755 "$D/cordon-oci" "$D/crun"

r=$D/rootfs
mkdir -p "$r/bin" "$r/etc" "$r/dev" "$r/proc" "$r/sys" "$r/tmp"
cp "$(command -v busybox)" "$r/bin/busybox"
for c in $("$r/bin/busybox" --list); do [ "$c" = busybox ] || ln -s busybox "$r/bin/$c"; done
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
printf 'root:x:0:\n' >"$r/etc/group"
tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$D/rootfs.tar" .
IMAGE=localhost/cordon-bench-oci:busybox
H=$(ulimit -Hn)

pm() { # RUNTIME ARGS...
	local rt=$1
	shift
	podman --root "$D/root" --runroot "$D/runroot" --tmpdir "$D/tmp" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend file --runtime "$D/$rt" "$@"
}
pm cordon-oci import --change CMD=/bin/sh "$D/rootfs.tar" "$IMAGE" >"$D/import.log" 2>&1 ||
	{ echo "bench/oci.sh: podman import failed: $(tail -1 "$D/import.log")" >&2; exit 1; }
one() { # RUNTIME: one run, its wall time in ms on stdout
	local t0 t1
	t0=$(date +%s%N)
	pm "$1" run --rm --network none --pull never --ulimit "nofile=$H:$H" --ulimit nproc=4096:4096 "$IMAGE" true >/dev/null ||
		{ echo "bench/oci.sh: podman run with $1 failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000)) | awk '{printf "%.1f\n", $1 / 1000}'
}
one cordon-oci >/dev/null # warm-up, not counted
one crun >/dev/null
for _ in $(seq "$N"); do
	one cordon-oci >>"$D/t.cordon-oci"
	one crun >>"$D/t.crun"
done
median() { sort -n "$1" | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
p90() { sort -n "$1" | awk '{v[NR]=$1} END{i=int(NR*0.9+0.5); if(i<1)i=1; print v[i]}'; }
echo
echo "podman run --rm IMAGE true, $N interleaved runs each (ms, wall)"
printf '%-46s %9s %9s\n' "" median p90
printf '%-46s %9s %9s\n' "podman --runtime cordon-oci" "$(median "$D/t.cordon-oci")" "$(p90 "$D/t.cordon-oci")"
printf '%-46s %9s %9s\n' "podman --runtime crun${wrap:+ (private mount ns)}" "$(median "$D/t.crun")" "$(p90 "$D/t.crun")"
awk -v a="$(median "$D/t.cordon-oci")" -v b="$(median "$D/t.crun")" \
	'BEGIN{printf "ratio cordon-oci/crun (median):                  %.2f (goal <= 1.20)\n", a/b}'
