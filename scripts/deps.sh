#!/bin/sh
# Install the Debian packages cordon needs to build and test, if any is missing.
# Idempotent and quiet when everything is present.
set -eu
PKGS="gcc make time strace gdb vim meson ninja-build pkg-config libseccomp-dev libssl-dev libcmocka-dev libmicrohttpd-dev jq iproute2 util-linux bubblewrap clang python3 python3-jsonschema python3-requests python3-pip python3-setuptools python3-pytest git curl openssl ca-certificates clang-tools-14 groff-base man-db"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# npm: Debian's package, unless a node.js install already brings its own.
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "cordon: missing packages:$missing (run as root, or install them with apt-get)" >&2
  exit 1
fi
echo "cordon: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends $missing >/dev/null
