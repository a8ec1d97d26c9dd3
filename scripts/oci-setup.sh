#!/bin/bash
# The OCI runtime-tools validation suite for `make test-oci`, built once per
# recipe by the shared script (../shared/oci/setup-validation.sh: installs
# golang-go, Debian's Go -dev packages, crun, runc, podman, conmon,
# busybox-static, containerd, then builds offline). Prints the cache
# directory on stdout, or exits 2 (nothing printed, a reason on stderr)
# where the tarball or the script is absent.
#   scripts/oci-setup.sh
#   RUNTIME_TOOLS_TAR=FILE   the source tarball (default
#                            ../shared/oci/runtime-tools-0105384.tar.xz beside the tree)
#   OCI_SETUP_SCRIPT=FILE    the build script (default: setup-validation.sh beside
#                            the tarball, else ../shared/oci/setup-validation.sh)
#   OCI_CACHE=DIR            cache root (default /var/cache/cordon-oci; CI keeps /var/cache)
# The build goes to OCI_CACHE/KEY, KEY a hash of the tarball's and the
# script's sha256: a new tarball or script builds anew, the same recipe is
# reused in seconds; builds of other recipes are removed.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=$(cd "$TOP/.." && pwd)/shared/oci
TAR=${RUNTIME_TOOLS_TAR:-$SHARED/runtime-tools-0105384.tar.xz}
if [ -z "${OCI_SETUP_SCRIPT:-}" ]; then
	OCI_SETUP_SCRIPT=$(dirname "$TAR")/setup-validation.sh
	[ -f "$OCI_SETUP_SCRIPT" ] || OCI_SETUP_SCRIPT=$SHARED/setup-validation.sh
fi
[ -f "$TAR" ] || { echo "oci-setup: no runtime-tools source tarball at $TAR (set RUNTIME_TOOLS_TAR)" >&2; exit 2; }
[ -f "$OCI_SETUP_SCRIPT" ] || { echo "oci-setup: no build script at $OCI_SETUP_SCRIPT (set OCI_SETUP_SCRIPT)" >&2; exit 2; }
TAR=$(cd "$(dirname "$TAR")" && pwd)/$(basename "$TAR")
ROOT=${OCI_CACHE:-/var/cache/cordon-oci}
KEY=$({ sha256sum <"$TAR"; sha256sum <"$OCI_SETUP_SCRIPT"; } | sha256sum | cut -c1-16)
OUT=$ROOT/$KEY
mkdir -p "$ROOT"
# The shared script keeps its own stamp (tarball, Go's and busybox's
# versions) inside OUT and returns at once when it is up to date; it also
# installs what is missing (containerd too: the engine tests use it).
OCI_VALIDATION_CTR=1 RUNTIME_TOOLS_TAR=$TAR OCI_VALIDATION_CACHE=$OUT bash "$OCI_SETUP_SCRIPT" >&2
for d in "$ROOT"/*/; do
	[ "${d%/}" = "$OUT" ] || rm -rf "${d%/}"
done
echo "$OUT"
