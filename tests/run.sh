#!/bin/bash
# Runs every test: the cmocka unit tests, then the integration tests, and
# ends with one line "N passed, N failed, N skipped".
set -u
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=$(mktemp /tmp/cordon-results.XXXXXX)
REPORTS_DIR=$(mktemp -d /tmp/cordon-reports.XXXXXX)
export BUILD RESULTS REPORTS_DIR

unit_pass=0
unit_fail=0
for t in "$BUILD"/test-*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	p=$(printf '%s\n' "$out" | grep -c '^\[       OK \]')
	f=$(printf '%s\n' "$out" | grep -c '^\[  FAILED  \] test')
	if [ $rc != 0 ] && [ "$f" = 0 ]; then f=1; fi
	unit_pass=$((unit_pass + p))
	unit_fail=$((unit_fail + f))
	if [ $rc != 0 ]; then
		echo "not ok - unit $(basename "$t")"
		printf '%s\n' "$out" | sed 's/^/    /' | tail -30
	else
		echo "ok - unit $(basename "$t") ($p cases)"
	fi
done

for s in "$TOP"/tests/integration/*.sh; do
	echo "# $(basename "$s")"
	t0=$SECONDS
	bash "$s"
	echo "# $(basename "$s"): $((SECONDS - t0)) s"
done

# Every report the suite produced must validate, and every status must have
# been produced by a real run at least once.
bash "$TOP/tests/check-reports.sh" "$REPORTS_DIR"
rm -rf "$REPORTS_DIR"

pass=$(grep -c '^pass$' "$RESULTS")
fail=$(grep -c '^fail$' "$RESULTS")
skip=$(grep -c '^skip$' "$RESULTS")
rm -f "$RESULTS"
pass=$((pass + unit_pass))
fail=$((fail + unit_fail))
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
