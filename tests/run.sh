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
		echo "failed unit:$(basename "$t")" >>"$RESULTS"
		printf '%s\n' "$out" | sed 's/^/    /' | tail -30
	else
		echo "ok - unit $(basename "$t") ($p cases)"
	fi
done

# The integration files run in CORDON_JOBS lanes (default: 2 where there are
# two CPUs or more). A test counts only what it made itself, by name, so the
# files do not see each other. With more than one lane, every line is
# printed as it comes, after "[FILE] "; the slowest files start first.
jobs=${CORDON_JOBS:-$(( $(nproc) >= 2 ? 2 : 1 ))}
# CORDON_TESTS=REGEX, CORDON_SKIP=REGEX (see tests/lib.sh): a file none of
# whose tests are chosen is not started at all (some files start servers before their first test).
has_tests() {
	[ -n "${CORDON_TESTS:-}${CORDON_SKIP:-}" ] || return 0
	local f n
	f=$(basename "$1" .sh)
	for n in $(sed -n 's/^\(test_[A-Za-z0-9_]*\)().*/\1/p' "$1"); do
		[ -n "${CORDON_TESTS:-}" ] && ! [[ "$f:$n" =~ $CORDON_TESTS ]] && continue
		[ -n "${CORDON_SKIP:-}" ] && [[ "$f:$n" =~ $CORDON_SKIP ]] && continue
		return 0
	done
	return 1
}
files=()
slow="harness serve network evidence lifecycle" # the longest first, under sanitizers too
for s in $(printf "$TOP/tests/integration/%s.sh " $slow) "$TOP"/tests/integration/*.sh; do
	case " ${files[*]} " in *" $s "*) continue ;; esac
	has_tests "$s" && files+=("$s")
done
run_file() {
	local t0=$SECONDS
	echo "# $(basename "$1")"
	bash "$1"
	echo "# $(basename "$1"): $((SECONDS - t0)) s"
}
if [ "$jobs" -le 1 ]; then
	for s in "${files[@]}"; do run_file "$s"; done
else
	running=0
	for s in "${files[@]}"; do
		if [ "$running" -ge "$jobs" ]; then
			wait -n
			running=$((running - 1))
		fi
		run_file "$s" 2>&1 | sed -u "s/^/[$(basename "$s" .sh)] /" &
		running=$((running + 1))
	done
	wait
fi

# Every report the suite produced must validate, and every status must have
# been produced by a real run at least once.
bash "$TOP/tests/check-reports.sh" "$REPORTS_DIR"
rm -rf "$REPORTS_DIR"

pass=$(grep -c '^pass$' "$RESULTS")
fail=$(grep -c '^fail$' "$RESULTS")
skip=$(grep -c '^skip$' "$RESULTS")
# The names of the failed tests again at the end, each with the last lines
# of what it said: a CI log may show only its tail.
grep '^\(failed\|why\) ' "$RESULTS" | sed 's/^failed /not ok - /; s/^why /    /'
rm -f "$RESULTS"
pass=$((pass + unit_pass))
fail=$((fail + unit_fail))
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
