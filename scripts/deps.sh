#!/bin/sh
# Install the Debian packages cordon needs to build and test, if any is missing.
# Idempotent and quiet when everything is present. The lists are in
# scripts/packages/ (runtime.txt is the one list of what cordon needs to run).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PKGS=$(sed 's/#.*//' "$HERE/packages/build.txt" "$HERE/packages/runtime.txt" \
	"$HERE/packages/test.txt" "$HERE/packages/host-only.txt")
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# node and npm: Debian's packages, unless a node.js install already brings its own.
command -v node >/dev/null 2>&1 && missing=$(printf '%s\n' $missing | grep -vx nodejs | tr '\n' ' ')
command -v npm >/dev/null 2>&1 || missing="$missing npm"
missing=$(echo $missing)
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "cordon: missing packages: $missing (run as root, or install them with apt-get)" >&2
  exit 1
fi
echo "cordon: installing $missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends $missing >/dev/null
