# Issue 35, restricted hosts: where a layer cannot be had, cordon says which
# and why, in the same words from `cordon explain` and from the refused run
# (docs/hosts.md). The restrictions are made here: tests/probe/restrict.c
# runs cordon under a seccomp filter that refuses user namespaces (as
# Docker's default profile) or Landlock (as gVisor); and cordon nested in
# cordon itself.
. "$(dirname "$0")/../lib.sh"
RESTRICT="$BUILD/probe-restrict"

need_restrict() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "probe-restrict filters x86_64 system calls only"; return; }
	[ -x "$RESTRICT" ] || t_skip "no $RESTRICT"
}

# explain_verdict MODE: the verdict line of explain under probe-restrict MODE
explain_verdict() {
	"$RESTRICT" "$1" "$CORDON" explain -- /bin/true 2>&1 | sed -n 's/^verdict: //p'
}

# restricted_run MODE [run options]: cordon run under probe-restrict MODE;
# RC and ERR
restricted_run() {
	local mode=$1
	shift
	ERR=$("$RESTRICT" "$mode" "$CORDON" run --ro "$BUILD" "$@" -- /bin/true 2>&1 >/dev/null)
	RC=$?
}

test_hosts_no_user_namespaces_said_exactly() {
	need_restrict || return
	local want='setup-error: user namespaces: refused by seccomp (ENOSYS from clone3: cordon runs under a filter, e.g. a container'"'"'s profile or cordon itself)'
	expect_eq "$(explain_verdict nouserns)" "$want" "explain's verdict"
	expect_match "$("$RESTRICT" nouserns "$CORDON" explain -- /bin/true 2>&1)" '^  user namespaces: refused by seccomp \(ENOSYS from clone3' "explain's host lines"
	restricted_run nouserns
	expect_eq "$RC" 125 "the run: setup-error ($ERR)"
	expect_match "$ERR" "^cordon: ${want//(/\\(}" "the run says it in the same words"
	# As an ordinary user too (the same cause, not a sysctl's).
	if [ "$(id -u)" = 0 ]; then
		chmod 755 "$T_TMP" "$WS"
		ERR=$(cd "$WS" && setpriv --reuid 65534 --regid 65534 --clear-groups "$RESTRICT" nouserns "$CORDON" run --ro "$BUILD" -- /bin/true 2>&1 >/dev/null)
		expect_match "$ERR" "^cordon: ${want//(/\\(}" "an ordinary user's run"
	fi
	t_assert
}

test_hosts_no_landlock_said_exactly() {
	need_restrict || return
	local want='setup-error: Landlock: refused by seccomp or not in this kernel (ENOSYS from landlock_create_ruleset under a seccomp filter): the second filesystem layer is missing; set enforcement.allow_weaker ["landlock"] to run without it'
	expect_eq "$(explain_verdict nolandlock)" "$want" "explain's verdict (it said: would run)"
	restricted_run nolandlock
	expect_eq "$RC" 125 "the run: setup-error ($ERR)"
	expect_eq "$ERR" "cordon: $want" "the run says it in the same words"
	# allow_weaker landlock: the run goes on, and the report says ABI 0.
	printf '{"enforcement": {"allow_weaker": ["landlock"]}}\n' >"$T_TMP/weak.json"
	R=$T_TMP/weak-report.json
	ERR=$("$RESTRICT" nolandlock "$CORDON" run --report "$R" --policy "$T_TMP/weak.json" --ro "$BUILD" -- /bin/true 2>&1)
	expect_eq "$?" 0 "allow_weaker landlock: it runs ($ERR)"
	expect_eq "$(field .enforcement.landlock_abi)" 0 "the report says no Landlock"
	keep_report "$R"
	t_assert
}

# Nested in cordon: the first call cordon needs that its outer filter
# refuses is named (openat2, which cordon's own filter answers ENOSYS), by
# explain and by the run alike; never "the current directory ... was
# replaced by a link".
test_hosts_nested_in_cordon_said_exactly() {
	local inner
	inner=$("$CORDON" run --ro "$BUILD" -- "$CORDON" run -- /bin/true 2>&1)
	expect_match "$inner" "^cordon: setup-error: the current directory $WS: openat2: refused by seccomp \\(ENOSYS\\): cordon runs under a filter" "the nested run"
	expect_nomatch "$inner" "replaced by a link" "not the misleading reason"
	inner=$("$CORDON" run --ro "$BUILD" -- "$CORDON" explain -- /bin/true 2>&1 | sed -n 's/^verdict: //p')
	expect_match "$inner" "^setup-error: the current directory $WS: openat2: refused by seccomp \\(ENOSYS\\)" "the nested explain"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_hosts_'); do t_run "$t"; done
