#!/bin/bash
# `meson test`'s last test: the reports of every integration file (kept by
# tests/meson-integration.sh) validate, and every status was produced. A
# file whose reports are missing (it has not run in this build directory)
# makes it a skip: the statuses need the whole suite.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$1
dirs=()
for s in "$TOP"/tests/integration/*.sh; do
	d="$BUILD/meson-reports/$(basename "$s" .sh)"
	if [ ! -d "$d" ]; then
		echo "skip: $(basename "$s") has not run in $BUILD"
		exit 77
	fi
	dirs+=("$d")
done
exec bash "$TOP/tests/check-reports.sh" "${dirs[@]}"
