#!/bin/bash
# serve-image.sh: the container image of `cordon serve`, built from this
# tree (docs/serve-cluster.md). Nothing is pulled from an image registry:
#  1. the Debian 12 root of scripts/debian-root.sh (debootstrap from the
#     mirror apt is configured with, cached by its recipe);
#  2. the build's cordon, cordon-serve and cordon-tls.so in /usr/local/bin,
#     with any library ldd names that the root lacks;
#  3. `podman import` of the two as IMAGE (default localhost/cordon-serve:
#     latest), its entrypoint `cordon serve`, its default command serving
#     TLS on 0.0.0.0:8080 with the files a pod mounts under /etc/cordon.
#
#   scripts/serve-image.sh [--build DIR] [--tag IMAGE] [--tar FILE]
#   scripts/serve-image.sh --root [--cached]   the cached root's path only
#                                              (--cached: exit 3 if none)
# --tar FILE: write the image's tarball there, no import. PODMAN_ARGS:
# podman's global options (tests: a private --root and --runroot).
# Exit 2: cannot be built here (not root, no debootstrap or podman, no
# mirror, debootstrap failed), with one line saying why.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CORDON_TEST_CACHE:-/var/cache/cordon-tests}
BUILD=$TOP/build
TAG=localhost/cordon-serve:latest
TAR=""
ROOT_ONLY=0
CACHED=0
die() { echo "serve-image: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--tag) TAG=$2; shift 2 ;;
	--tar) TAR=$2; shift 2 ;;
	--root) ROOT_ONLY=1; shift ;;
	--cached) CACHED=1; shift ;;
	*) echo "usage: serve-image.sh [--build DIR] [--tag IMAGE] [--tar FILE] | --root [--cached]" >&2; exit 2 ;;
	esac
done

# The root: scripts/debian-root.sh's (the one Debian root of the tests,
# cached by its recipe; it holds scripts/packages/runtime.txt's packages,
# cordon-serve's libmicrohttpd among them).
if [ $CACHED = 1 ]; then
	ROOT=$(bash "$TOP/scripts/debian-root.sh" --cached) || exit 3
else
	ROOT=$(bash "$TOP/scripts/debian-root.sh") || exit 2
fi
OUT=$(dirname "$ROOT")
if [ $ROOT_ONLY = 1 ]; then
	echo "$ROOT"
	exit 0
fi

for f in cordon cordon-serve cordon-tls.so; do
	[ -f "$BUILD/$f" ] || die "$BUILD/$f: not built (make)"
done
[ -n "$TAR" ] || command -v podman >/dev/null || die "no podman (Debian: podman)"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
X=$W/extra
mkdir -p "$X/usr/local/bin" "$X/etc/cordon" "$X/srv/cordon" "$X/var/lib/cordon"
chmod 700 "$X/srv/cordon" "$X/var/lib/cordon"
cp "$BUILD/cordon" "$BUILD/cordon-serve" "$BUILD/cordon-tls.so" "$X/usr/local/bin/"
# The libraries the programs load that the root has not (by path; /lib is
# the root's link to usr/lib).
for f in cordon cordon-serve cordon-tls.so; do
	ldd "$BUILD/$f" | awk '/=> \// { print $3 } /^\t\// { print $1 }'
done | sort -u | while read -r lib; do
	p=${lib#/usr}
	[ -e "$OUT/root/usr$p" ] || [ -e "$OUT/root$lib" ] && continue
	mkdir -p "$X/usr$(dirname "$p")"
	cp -L "$lib" "$X/usr$p"
	echo "serve-image: $lib copied from the host (not in the root)" >&2
done
tar --numeric-owner -C "$OUT/root" -cf "$W/image.tar" .
# Appended: only paths the root has not (an image layer takes no path
# twice), so /usr/local/bin's files, not the directory.
# shellcheck disable=SC2046
tar --numeric-owner --owner=0 --group=0 -C "$X" -rf "$W/image.tar" --no-recursion \
	./usr/local/bin/cordon ./usr/local/bin/cordon-serve ./usr/local/bin/cordon-tls.so ./etc/cordon ./srv/cordon ./var/lib/cordon \
	$(cd "$X" && find ./usr -path ./usr/local -prune -o -type f -print)
if [ -n "$TAR" ]; then
	mv "$W/image.tar" "$TAR"
	echo "$TAR"
	exit 0
fi
read -ra PA <<<"${PODMAN_ARGS:-}"
podman "${PA[@]}" import \
	--change 'ENTRYPOINT ["/usr/local/bin/cordon", "serve"]' \
	--change 'CMD ["--listen", "0.0.0.0:8080", "--token-file", "/etc/cordon/token", "--tls-cert", "/etc/cordon/tls/tls.crt", "--tls-key", "/etc/cordon/tls/tls.key", "--ceiling", "/etc/cordon/ceiling.json", "--state-dir", "/srv/cordon"]' \
	--change 'EXPOSE 8080' \
	--change 'WORKDIR /srv/cordon' \
	"$W/image.tar" "$TAG" >/dev/null
echo "$TAG"
