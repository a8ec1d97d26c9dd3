#!/bin/bash
# A minimal Debian 12 root for the tests (tests/integration/rootfs.sh, the
# package test scripts/test-deb.sh, the serve image), made
# once per recipe by debootstrap from apt's own mirror, and shared read-only
# by every test that needs one. Prints its directory.
#   scripts/debian-root.sh            build it if it is not cached yet
#   scripts/debian-root.sh --cached   only print it; exit 3 if not cached
# Its packages: debootstrap's minbase and cordon's run-time list
# (scripts/packages/runtime.txt), so that cordon's Debian packages install
# in it without a network. Cached at $CORDON_TEST_CACHE (default
# /var/cache/cordon-tests) as debian-<hash of this file and that list>/root:
# change the recipe and the next call builds a new one. The mirror is the first of apt's sources for bookworm
# (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources), or
# $CORDON_DEBIAN_MIRROR. Exit 2: cannot be built here (not root, no
# debootstrap, no mirror, the mirror unreachable).
set -euo pipefail
SUITE=bookworm
CACHE=${CORDON_TEST_CACHE:-/var/cache/cordon-tests}
RUNTIME=$(dirname "$0")/packages/runtime.txt
INCLUDE=$(sed 's/#.*//' "$RUNTIME" | xargs | tr ' ' ',')
HASH=$(cat "$0" "$RUNTIME" | sha256sum | cut -c1-16)
OUT=$CACHE/debian-$HASH
if [ -f "$OUT/ready" ]; then
	echo "$OUT/root"
	exit 0
fi
[ "${1:-}" = --cached ] && exit 3
die() { echo "debian-root: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "making the root needs root (its files are root's)"
command -v debootstrap >/dev/null || die "no debootstrap"

# The mirror apt uses for the suite: a one-line "deb URI SUITE ..." or a
# deb822 stanza whose Suites has it (not the security archive).
mirror() {
	if [ -n "${CORDON_DEBIAN_MIRROR:-}" ]; then
		echo "$CORDON_DEBIAN_MIRROR"
		return
	fi
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" '$1 == "deb" { u = ""; for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $(i-1) !~ /^\[/ && u == "") { u = $i; if ($(i+1) == s) { print u; exit } } }' "$f"
	done | head -n1 | grep . && return
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" }
			{ u = ""; ok = 0; t = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); u = a[2] }
				if ($i ~ /^Suites:/) { n = split($i, b, /[ \t]+/); for (k = 2; k <= n; k++) if (b[k] == s) ok = 1 }
				if ($i ~ /^Types:.*deb( |$)/) t = 1 }
			  if (u != "" && ok && t) { print u; exit } }' "$f"
	done | head -n1 | grep .
}
MIRROR=$(mirror) || die "no mirror for $SUITE in apt's sources"

mkdir -p "$CACHE"
chmod 755 "$CACHE"
TMP=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
echo "debian-root: debootstrap --variant=minbase $SUITE from $MIRROR into $OUT (once per recipe)" >&2
debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$TMP/root" "$MIRROR" >"$TMP/log" 2>&1 ||
	die "debootstrap from $MIRROR failed (unreachable?): $(tail -n1 "$TMP/log")"
rm -rf "$TMP"/root/var/cache/apt/*.bin "$TMP"/root/var/cache/apt/archives/*.deb "$TMP"/root/var/lib/apt/lists/* "$TMP/log"
# cordon's checks of a rootfs: root's, written by no one else, searchable.
chmod 755 "$TMP" "$TMP/root"
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
touch "$OUT/ready"
for d in "$CACHE"/debian-*/; do
	[ "${d%/}" = "$OUT" ] || [ ! -f "$d/ready" ] || rm -rf "$d"
done
echo "$OUT/root"
