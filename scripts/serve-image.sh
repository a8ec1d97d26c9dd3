#!/bin/bash
# serve-image.sh: the container image of `cordon serve`, built from this
# tree (docs/serve-cluster.md). Nothing is pulled from an image registry:
#  1. a Debian 12 root made by debootstrap from the mirror apt is configured
#     with (apt's sources; $CORDON_DEBIAN_MIRROR overrides), cached at
#     $CORDON_TEST_CACHE (default /var/cache/cordon-tests)/debian-SHA/root,
#     SHA the first 16 hex of the sha256 of the recipe (the debootstrap
#     command line and the package list), reused while the recipe is the
#     same;
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
SUITE=bookworm
PACKAGES=(libmicrohttpd12) # cordon-serve's HTTP server (scripts/packages/runtime.txt)
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

# The mirror apt uses for the suite: a one-line "deb [opts] URI SUITE ..."
# or a deb822 stanza of Types deb whose Suites has it.
mirror() {
	if [ -n "${CORDON_DEBIAN_MIRROR:-}" ]; then
		echo "$CORDON_DEBIAN_MIRROR"
		return
	fi
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			sed 's/\[[^]]*\]//' "$f" | awk -v s="$SUITE" '$1 == "deb" && $3 == s { print $2; exit }'
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" }
				{ u = ""; ok = 0; t = 0
				  for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); u = a[2] }
					if ($i ~ /^Suites:/) { n = split($i, b, /[ \t]+/); for (k = 2; k <= n; k++) if (b[k] == s) ok = 1 }
					if ($i ~ /^Types:.*deb( |$)/) t = 1 }
				  if (u != "" && ok && t) { print u; exit } }' "$f"
		done
	} | head -n1 | grep .
}
MIRROR=$(mirror) || die "no mirror for $SUITE in apt's sources (or set CORDON_DEBIAN_MIRROR)"
INCLUDE=$(IFS=,; echo "${PACKAGES[*]}")
# The recipe: what decides the root's content. ROOT stands for the
# directory, which is not part of it.
RECIPE="debootstrap --variant=minbase --include=$INCLUDE $SUITE ROOT $MIRROR
$(printf '%s\n' "${PACKAGES[@]}")"
SHA=$(printf '%s\n' "$RECIPE" | sha256sum | cut -c1-16)
OUT=$CACHE/debian-$SHA

# The root, made once per recipe (the file "recipe" is written last: a root
# without it is not finished).
debian_root() {
	if [ -f "$OUT/recipe" ] && [ -d "$OUT/root" ]; then
		return 0
	fi
	[ $CACHED = 0 ] || exit 3
	[ "$(id -u)" = 0 ] || die "making the root needs root (its files are root's)"
	command -v debootstrap >/dev/null || die "no debootstrap (Debian: debootstrap)"
	mkdir -p "$CACHE"
	chmod 755 "$CACHE"
	local tmp
	tmp=$(mktemp -d "$CACHE/build.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	echo "serve-image: debootstrap --variant=minbase --include=$INCLUDE $SUITE from $MIRROR into $OUT (once per recipe)" >&2
	debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$tmp/root" "$MIRROR" >"$tmp/log" 2>&1 ||
		die "debootstrap from $MIRROR failed (unreachable?): $(tail -n1 "$tmp/log")"
	rm -rf "$tmp"/root/var/cache/apt/*.bin "$tmp"/root/var/cache/apt/archives/*.deb "$tmp"/root/var/lib/apt/lists/* "$tmp/log"
	chmod 755 "$tmp" "$tmp/root"
	rm -rf "$OUT"
	mv "$tmp" "$OUT"
	trap - EXIT
	printf '%s\n' "$RECIPE" >"$OUT/recipe"
}
debian_root
if [ $ROOT_ONLY = 1 ]; then
	echo "$OUT/root"
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
