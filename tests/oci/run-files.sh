#!/bin/bash
# make test-oci, with tests/oci/run.sh: the engine tests (tests/oci/engines.sh:
# podman through conmon, containerd's ctr through the runc shim v2) against
# each runtime of OCI_ENGINE_RUNTIMES (default "crun cordon-oci"), then
# cordon-oci's own verbs (tests/oci/lifecycle.sh: cordon-oci's messages and
# state, not a runtime-neutral test, so against cordon-oci only), its
# runtime-spec behaviours (tests/oci/spec.sh) and cordon's layers in OCI mode
# (tests/oci/layers.sh), its egress (tests/oci/egress.sh) and containerd's
# CRI plugin with a `cordon` runtime handler (tests/oci/cri.sh, a pod of two
# containers), these four with BUILD/cordon-oci. See
# tests/oci/README.md.
#   bash tests/oci/run-files.sh [BUILD]
# OCI_CRUN, OCI_CORDON name the binaries (crun on PATH, BUILD/cordon-oci);
# CORDON_TESTS=REGEX picks tests as in tests/run.sh (FILE:NAME, FILE being
# engines, lifecycle, spec, layers, egress or cri). A test that cannot run here (not
# root, no podman, conmon, containerd, busybox-static, crun) is a skip, said
# with its reason; under CI (CI set and not 0/false/no, as .ci/run runs) a
# skip fails.
set -uo pipefail
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "${CI:-}" in "" | 0 | false | no) CI_MODE=0 ;; *) CI_MODE=1 ;; esac
FAILED=0
summary=()

say() { echo "oci-files: $*"; }
skip() { # LABEL REASON
	say "SKIP: $1: $2"
	summary+=("$1 skipped")
	[ "$CI_MODE" = 0 ] || { say "under CI a skip is a failure"; FAILED=1; }
}

# run_file LABEL FILE [VAR=VALUE...]: one test file, its lines after
# "[LABEL] "; the file's counts (lib.sh's RESULTS lines) go to the summary.
run_file() {
	local label=$1 f=$2 res rc p fl s
	shift 2
	res=$(mktemp /tmp/cordon-oci-files.XXXXXX)
	env "$@" BUILD="$BUILD" RESULTS="$res" bash "$f" 2>&1 | sed -u "s/^/[$label] /"
	rc=${PIPESTATUS[0]}
	p=$(grep -cx pass "$res")
	fl=$(grep -cx fail "$res")
	s=$(grep -cx skip "$res")
	rm -f "$res"
	# a file that ended before its tests could count (status 0, 1 or 77 else)
	if [ "$fl" = 0 ] && [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		say "$label: $(basename "$f") ended with status $rc"
		fl=1
	fi
	[ "$fl" = 0 ] || FAILED=1
	if [ "$s" != 0 ] && [ "$CI_MODE" = 1 ]; then
		say "$label: $s test(s) skipped; under CI a skip is a failure"
		FAILED=1
	fi
	summary+=("$label $p/$((p + fl + s))$([ "$s" = 0 ] || echo " ($s skipped)")")
}

if [ "$(id -u)" != 0 ]; then
	skip "engines, lifecycle" "not root (the engines and the runtimes need root)"
else
	for rt in ${OCI_ENGINE_RUNTIMES:-crun cordon-oci}; do
		case $rt in
		crun) bin=${OCI_CRUN:-$(command -v crun || echo /usr/bin/crun)} ;;
		cordon-oci) bin=${OCI_CORDON:-$BUILD/cordon-oci} ;;
		*) say "unknown runtime '$rt' in OCI_ENGINE_RUNTIMES (crun, cordon-oci)"; exit 1 ;;
		esac
		if [ ! -x "$bin" ]; then
			skip "engines $rt" "no $rt at $bin"
			continue
		fi
		run_file "engines $rt" "$TOP/tests/oci/engines.sh" OCI_RUNTIME="$bin"
	done
	run_file "lifecycle cordon-oci" "$TOP/tests/oci/lifecycle.sh" OCI_CORDON="${OCI_CORDON:-$BUILD/cordon-oci}"
	run_file "spec cordon-oci" "$TOP/tests/oci/spec.sh"
	run_file "layers cordon-oci" "$TOP/tests/oci/layers.sh"
	run_file "egress cordon-oci" "$TOP/tests/oci/egress.sh"
	run_file "cri cordon-oci" "$TOP/tests/oci/cri.sh" OCI_RUNTIME="${OCI_CORDON:-$BUILD/cordon-oci}"
fi
say "$(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
exit "$FAILED"
