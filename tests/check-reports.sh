#!/bin/bash
# The checks over every report of a suite: each validates against the schema,
# and every status was produced by a real run at least once. Prints "ok" /
# "not ok" lines and appends pass/fail/skip to $RESULTS (when set).
# Usage: check-reports.sh DIR... (the reports are DIR/report.*)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=${RESULTS:-/dev/null}
reports=()
for d in "$@"; do
	for f in "$d"/report.*; do [ -e "$f" ] && reports+=("$f"); done
done
rc=0
n=${#reports[@]}
if out=$(/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/report.schema.json" "${reports[@]}" 2>&1); then
	echo "ok - all $n reports of the suite validate against schemas/report.schema.json"
	echo pass >>"$RESULTS"
else
	echo "not ok - reports that do not validate:"
	printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	echo fail >>"$RESULTS"
	echo "failed check-reports:validate" >>"$RESULTS"
	rc=1
fi
seen=$( ((n)) && cat "${reports[@]}" | jq -r .status | sort -u | tr '\n' ' ')
missing=""
for st in ok exit-nonzero signaled timeout cpu-limit memory-limit output-limit file-size-limit \
	denied unauthorized infeasible setup-error interrupted; do
	case " $seen " in *" $st "*) ;; *) missing="$missing $st" ;; esac
done
if [ -n "${CORDON_TESTS:-}${CORDON_SKIP:-}" ]; then
	echo "ok - every status was produced # SKIP a subset of the tests ran (CORDON_TESTS, CORDON_SKIP)"
	echo skip >>"$RESULTS"
elif [ -z "$missing" ]; then
	echo "ok - every status was produced and validated"
	echo pass >>"$RESULTS"
else
	echo "not ok - statuses never produced by the suite:$missing"
	echo fail >>"$RESULTS"
	echo "failed check-reports:statuses" >>"$RESULTS"
	rc=1
fi
exit $rc
