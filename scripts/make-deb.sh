#!/bin/bash
# make deb: cordon's Debian packages from this tree (debian/), built in a
# copy of the tree's tracked files (dpkg-buildpackage writes beside its
# source), then checked by lintian (an error fails). The .debs land in
# build/deb/. docs/install.md.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${DEB_OUT:-$TOP/build/deb}
ver=$(sed -n "s/^ *version : '\(.*\)',/\1/p" "$TOP/meson.build")
chv=$(sed -n '1s/^cordon (\(.*\)).*/\1/p' "$TOP/debian/changelog")
[ "$ver" = "$chv" ] || { echo "make deb: debian/changelog is at $chv, meson.build at $ver" >&2; exit 1; }
W=$(mktemp -d /tmp/cordon-deb.XXXXXX)
trap 'rm -rf "$W"' EXIT
src=$W/cordon-$ver
mkdir -p "$src"
# the tracked files as they are in the work tree (uncommitted edits included)
(cd "$TOP" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build' |
	xargs -0 tar --no-recursion -cf -) | tar -C "$src" -xf -
cd "$src"
dpkg-checkbuilddeps
DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b >"$W/build.log" 2>&1 ||
	{ tail -40 "$W/build.log" >&2; echo "make deb: dpkg-buildpackage failed (the log's end above)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.deb
cp "$W"/*.deb "$OUT/"
# lintian: errors fail the build; warnings are printed
lintian --fail-on error --suppress-tags-from-file "$TOP/debian/lintian-suppress" "$W"/*.changes 2>&1 | tee "$W/lintian.log" || {
	echo "make deb: lintian found errors (above)" >&2
	exit 1
}
ls "$OUT"/*.deb
