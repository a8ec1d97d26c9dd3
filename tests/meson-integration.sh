#!/bin/bash
# `meson test`: one integration file (tests/integration/NAME.sh) against
# the build directory meson gives, its reports kept apart for the final
# "reports" test (tests/check-reports.sh). Exit status: 0, 1, or 77 (every
# test skipped), from tests/lib.sh.
set -u
file=$1
BUILD=$2
export BUILD
REPORTS_DIR="$BUILD/meson-reports/$(basename "$file" .sh)"
rm -rf "$REPORTS_DIR"
mkdir -p "$REPORTS_DIR"
export REPORTS_DIR
exec bash "$file"
