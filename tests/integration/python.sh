# The Python package (python/): installs with pip offline, pure Python; its
# pytest suite (python/tests) runs here, one result per pytest case.
. "$(dirname "$0")/../lib.sh"

# The interpreter with pytest: Debian's (python3-pytest, scripts/deps.sh),
# else the first python3 on PATH.
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import pytest, setuptools' 2>/dev/null; then PY=$p; break; fi
done

test_pip_install_offline_pure_python() {
	[ -n "$PY" ] || { t_skip "no python3 with pytest and setuptools (python3-pytest, python3-setuptools)"; return; }
	# No network: no build isolation (it would download setuptools), no deps.
	"$PY" -m pip install -q --no-build-isolation --no-deps --target "$T_TMP/site" "$TOP/python" >"$T_TMP/pip" 2>&1 ||
		fail "pip install ./python: $(tail -5 "$T_TMP/pip")"
	OUT=$(cd / && PYTHONPATH="$T_TMP/site" "$PY" -c 'import cordon, os; print(cordon.__file__.startswith(os.environ["PYTHONPATH"]), cordon.run.__name__, cordon.Client.__name__)')
	expect_eq "$OUT" "True run Client" "installed and importable"
	expect_eq "$(find "$T_TMP/site" -name '*.so' | wc -l)" 0 "no compiled extension"
	[ -f "$T_TMP/site/cordon/py.typed" ] || fail "py.typed installed (PEP 561: the package is typed)"
	[ -f "$T_TMP/site/cordon/aio.py" ] || fail "cordon.aio installed"
	t_assert
}

# Every pytest case is a result of its own: py:FILE::NAME.
run_pytest() {
	local name="pytest"
	if [ -n "${CORDON_TESTS:-}" ] && ! [[ "$(basename "$0" .sh):$name" =~ $CORDON_TESTS ]]; then
		return 0
	fi
	if [ -z "$PY" ]; then
		echo "ok - pytest # SKIP no python3 with pytest and setuptools (python3-pytest, python3-setuptools)"
		echo skip >>"$RESULTS"
		T_SKIP=$((T_SKIP + 1))
		return 0
	fi
	local tmp site xml
	tmp=$(mktemp -d /tmp/cordon-test-tmp.XXXXXX)
	site=$tmp/site xml=$tmp/junit.xml
	"$PY" -m pip install -q --no-build-isolation --no-deps --target "$site" "$TOP/python" >/dev/null 2>&1
	(cd "$TOP/python/tests" && CORDON="$CORDON" PYTHONPATH="$site" "$PY" -m pytest -q -p no:cacheprovider \
		--basetemp="$tmp/pt" --junitxml="$xml" . >"$tmp/log" 2>&1)
	if [ ! -s "$xml" ]; then
		echo "not ok - pytest"
		sed 's/^/    /' "$tmp/log" | tail -30
		echo fail >>"$RESULTS"
		T_FAIL=$((T_FAIL + 1))
	else
		local line
		while IFS= read -r line; do
			case $line in [a-z]*) echo "$line" | cut -f2- ;; *) echo "$line" ;; esac
			case $line in
			pass*) echo pass >>"$RESULTS"; T_PASS=$((T_PASS + 1)) ;;
			skip*) echo skip >>"$RESULTS"; T_SKIP=$((T_SKIP + 1)) ;;
			fail*) echo fail >>"$RESULTS"; T_FAIL=$((T_FAIL + 1))
				echo "failed python:${line#*not ok - }" >>"$RESULTS" ;;
			*) ;; # a failure's message line (counted once, with its test)
			esac
		done < <("$PY" - "$xml" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    name = f"py:{c.get('classname')}::{c.get('name')}"
    bad = c.find("failure") if c.find("failure") is not None else c.find("error")
    skip = c.find("skipped")
    if bad is not None:
        msg = (bad.get("message") or "").replace("\n", " ")[:300]
        print(f"fail\tnot ok - {name}\n    {msg}")
    elif skip is not None:
        print(f"skip\tok - {name} # SKIP {skip.get('message')}")
    else:
        print(f"pass\tok - {name}")
PYEOF
)
	fi
	rm -rf "$tmp"
}

test_pip_install_in_a_fresh_venv_offline() {
	# README's install command, as a new user runs it: a fresh venv of
	# Debian's python3 (python3-venv), no package index at all (issue 28:
	# setuptools' backend needed `wheel`, which a fresh venv lacks offline).
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null ||
		{ t_skip "no Debian python3 with venv and ensurepip (python3-venv)"; return; }
	/usr/bin/python3 -m venv "$T_TMP/venv" >"$T_TMP/venv.log" 2>&1 || { fail "venv: $(tail -3 "$T_TMP/venv.log")"; return; }
	"$T_TMP/venv/bin/pip" install -q --no-index "$TOP/python" >"$T_TMP/pip" 2>&1 ||
		fail "pip install --no-index ./python in a fresh venv: $(grep -i error "$T_TMP/pip" | head -3)"
	OUT=$(cd "$T_TMP" && "$T_TMP/venv/bin/python" -c 'import cordon, os; print(os.path.dirname(cordon.__file__))' 2>&1)
	expect_eq "$OUT" "$T_TMP/venv/lib/python3.11/site-packages/cordon" "cordon imported from the venv"
	[ -f "$OUT/client.py" ] || fail "the package's modules are installed"
	# An editable install as well (pip install -e).
	"$T_TMP/venv/bin/pip" uninstall -q -y cordon >/dev/null 2>&1
	"$T_TMP/venv/bin/pip" install -q --no-index -e "$TOP/python" >"$T_TMP/pip" 2>&1 ||
		fail "pip install -e: $(grep -i error "$T_TMP/pip" | head -3)"
	OUT=$(cd "$T_TMP" && "$T_TMP/venv/bin/python" -c 'import cordon, os; print(os.path.dirname(cordon.__file__))' 2>&1)
	expect_eq "$OUT" "$TOP/python/cordon" "editable install points at the tree"
	t_assert
}

t_run test_pip_install_offline_pure_python
t_run test_pip_install_in_a_fresh_venv_offline
run_pytest
