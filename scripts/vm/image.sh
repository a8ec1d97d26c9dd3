#!/bin/bash
# Builds the guest for `make test-vm`, once per recipe: Debian 12 (bookworm)
# from Debian's packages with its own stock cloud kernel, as an ext4 image
# plus the kernel and initramfs to boot it with. Prints the directory.
#   scripts/vm/image.sh [CACHE]     (default /var/cache/cordon-vm)
# The directory is named by a hash of this file: change the recipe and the
# next run builds a new image; the same recipe is reused in seconds.
set -euo pipefail
CACHE=${1:-${CORDON_VM_CACHE:-/var/cache/cordon-vm}}
HERE=$(cd "$(dirname "$0")" && pwd)
PKGDIR=$HERE/../packages
HASH=$(cat "$HERE/image.sh" "$PKGDIR/runtime.txt" "$PKGDIR/test.txt" | sha256sum | cut -c1-16)
OUT=$CACHE/$HASH
if [ -f "$OUT/ready" ]; then
	echo "$OUT"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "cordon-vm: building the image needs root" >&2; exit 1; }
for p in mmdebstrap qemu-system-x86 e2fsprogs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
	echo "cordon-vm: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
mkdir -p "$CACHE"
TMP=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
echo "cordon-vm: building the Debian 12 guest image in $OUT (once per recipe)" >&2
# What a Debian 12 user installs for cordon (scripts/packages/runtime.txt)
# and what the suite uses (test.txt), plus the guest's own system; cordon
# itself is built on the host (the same Debian 12 userland) and comes in on a
# second disk.
PKGS=linux-image-cloud-amd64,initramfs-tools,kmod,udev,e2fsprogs,make,gcc,libc6-dev,libcmocka0
PKGS=$PKGS,$(sed 's/#.*//' "$PKGDIR/runtime.txt" "$PKGDIR/test.txt" | tr -s ' \n' '\n' | grep . | paste -sd,)
mmdebstrap --quiet --variant=minbase --include="$PKGS" \
	--customize-hook='echo cordon-vm >"$1/etc/hostname"' \
	--customize-hook='chroot "$1" useradd -m -u 1000 -s /bin/bash tester' \
	--customize-hook='printf "/dev/vda / ext4 rw 0 1\n" >"$1/etc/fstab"' \
	--customize-hook='printf "127.0.0.1\tlocalhost\n127.0.1.1\tcordon-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts"' \
	--customize-hook='printf "#!/bin/sh\n# cordon-vm: mount the tree disk and hand over to its guest init.\nmount -t proc proc /proc\nmkdir -p /mnt/cordon\nmount -t ext4 /dev/vdb /mnt/cordon && exec /bin/bash /mnt/cordon/scripts/vm/guest-init.sh\necho cordon-vm: no tree disk; exit 1 >/dev/console\necho o >/proc/sysrq-trigger\n" >"$1/sbin/cordon-vm-init"; chmod 755 "$1/sbin/cordon-vm-init"' \
	--customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/*' \
	bookworm "$TMP/root" >&2
cp "$TMP"/root/boot/vmlinuz-* "$TMP/vmlinuz"
cp "$TMP"/root/boot/initrd.img-* "$TMP/initrd.img"
mkfs.ext4 -q -F -L cordon-root -d "$TMP/root" "$TMP/root.ext4" 1536M >&2
rm -rf "$TMP/root"
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
touch "$OUT/ready"
# Images of older recipes are of no more use.
for d in "$CACHE"/*/; do
	[ "${d%/}" = "$OUT" ] || [ ! -f "$d/ready" ] || rm -rf "$d"
done
echo "$OUT"
