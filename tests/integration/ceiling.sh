# Issue 6: the operator's ceiling, checked before anything starts, and
# `cordon explain`, which must agree with what a run actually does.
. "$(dirname "$0")/../lib.sh"

mk_ceiling() { # writes $WS/../ceiling.json for a workspace under $WS/work
	mkdir -p "$WS/work/proj" "$WS/data" "$WS/home/u/.ssh" "$WS/scratch"
	echo secret >"$WS/home/u/.ssh/id"
	echo d >"$WS/data/d.txt"
	cat >"$T_TMP/ceiling.json" <<J
{
  "filesystem": {"read": ["$WS/data", "$BUILD"], "write": ["$WS/work", "$WS/scratch"]},
  "network":    {"allow": ["*.example.com:443"], "loopback_ports": [8080]},
  "secrets":    {"API_TOKEN": {"env": "HOST_API_TOKEN"}},
  "limits":     {"wall_time": "2s", "memory": "256M", "pids": 64},
  "syscalls":   {"allow": ["personality"]},
  "enforcement": {"allow_weaker": []}
}
J
	C="$T_TMP/ceiling.json"
	cd "$WS/work/proj"
}

refused() { # LINE-REGEX...: unauthorized, not started, each line present
	expect_eq "$(field .status)" unauthorized "status"
	expect_eq "$RC" 123 "exit code"
	[ ! -e started ] || fail "the command was started"
	for l in "$@"; do
		expect_match "$ERR" "^cordon: unauthorized: $l" "line"
	done
	expect_eq "$(field .ceiling_sha256)" "$(sha256sum "$C" | cut -d' ' -f1)" "ceiling hash"
}

test_inside_the_ceiling_runs() {
	mk_ceiling
	cordon_run --ceiling "$C" --ro "$WS/data" -- /bin/sh -c 'cat '"$WS"'/data/d.txt; touch started'
	expect_eq "$(field .status)" ok "status: $ERR"
	expect_eq "$OUT" d "output"
	expect_eq "$(field '[.grants[] | select(.allowed | not)] | length')" 0 "all grants allowed"
	expect_eq "$(field '.grants[] | select(.kind=="write") | .rule')" "under rw prefix $WS/work" "rule recorded"
	t_assert
}

test_path_beyond_ceiling() {
	mk_ceiling
	cordon_run --ceiling "$C" --rw "$WS/home/u/.ssh" -- /bin/sh -c 'touch started'
	refused "write $WS/home/u/.ssh: not under any write prefix of the ceiling \\($WS/work, $WS/scratch\\)"
	cordon_run --ceiling "$C" --ro "$WS/home/u" -- /bin/sh -c 'touch started'
	refused "read $WS/home/u: not under any read or write prefix of the ceiling"
	t_assert
}

test_symlink_and_dotdot_spellings() {
	mk_ceiling
	ln -s "$WS/home/u/.ssh" "$WS/scratch/innocent"
	cordon_run --ceiling "$C" --ro "$WS/scratch/innocent" -- /bin/sh -c 'touch started'
	# A link outside the system directories is refused before the ceiling
	# is even consulted (review F3: a run could have planted it): a setup
	# error naming the link, and the command never starts.
	expect_eq "$(field .status)" setup-error "status of a grant through a link in the workspace"
	expect_match "$ERR" "$WS/scratch/innocent is a symbolic link in $WS/scratch, which a run could have planted" "the link is named"
	[ ! -e started ] || fail "the command was started"
	cordon_run --ceiling "$C" --ro "$WS/work/../home/u/.ssh" -- /bin/sh -c 'touch started'
	refused "read $WS/home/u/.ssh: not under"
	cordon_run --ceiling "$C" --ro ../../home/u -- /bin/sh -c 'touch started'
	refused "read $WS/home/u: not under"
	t_assert
}

test_workspace_itself_checked() {
	mk_ceiling
	cd "$WS/home/u"
	cordon_run --ceiling "$C" -- /bin/sh -c 'touch started'
	refused "write $WS/home/u: not under any write prefix"
	t_assert
}

test_endpoint_secret_syscall_weaker_port_beyond() {
	mk_ceiling
	cat >p.json <<'J'
{"network": {"allow": ["evil.com:443", "api.example.com:443", "example.com:443"], "loopback_ports": [9000]},
 "syscalls": {"allow": ["mount", "personality"]},
 "secrets": {"API_TOKEN": {"env": "OTHER_VAR"}, "DB": {"env": "X"}},
 "enforcement": {"allow_weaker": ["landlock"]}}
J
	cordon_run --ceiling "$C" --policy p.json -- /bin/sh -c 'touch started'
	refused "network evil.com:443: not covered by any endpoint of the ceiling \\(\\*\\.example\\.com:443\\)" \
		"network example.com:443: not covered" "port 9000: not in network.loopback_ports" \
		"secret API_TOKEN: the ceiling pins it to the host variable HOST_API_TOKEN" \
		"secret DB: not a secret name of the ceiling" "syscall mount: not in syscalls.allow of the ceiling" \
		"weaker landlock: not in enforcement.allow_weaker of the ceiling"
	expect_nomatch "$ERR" "api.example.com|personality" "allowed requests are not refused"
	expect_eq "$(field '[.grants[] | select(.allowed)] | map(.target) | sort | join(",")')" \
		"$(printf '%s\n' "$BUILD" "$WS/work/proj" api.example.com:443 memory=268435456 personality pids=64 wall_time=2s | LC_ALL=C sort | paste -sd,)" "allowed grants"
	t_assert
}

test_secret_file_cannot_be_swapped() {
	mk_ceiling
	HOST_API_TOKEN=x cordon_run --ceiling "$C" --secret API_TOKEN=file:/etc/passwd -- /bin/sh -c 'touch started'
	refused "secret API_TOKEN: the ceiling pins it to the host variable HOST_API_TOKEN"
	t_assert
}

test_limits_above_and_applied() {
	mk_ceiling
	cordon_run --ceiling "$C" --memory-limit 1G --time-limit 5s -- /bin/sh -c 'touch started'
	refused "limit memory=1073741824: above the ceiling's maximum 268435456" "limit wall_time=5s: above the ceiling's maximum 2s"
	# A limitless task gets the maxima, and they are enforced.
	cordon_run --ceiling "$C" -- sleep 10
	expect_eq "$(field .status)" timeout "the ceiling's wall time enforced"
	expect_eq "$(field .limits.wall_time.source)" ceiling "source"
	expect_eq "$(field .limits.memory.value)" 268435456 "memory applied"
	expect_eq "$(field .limits.pids.source)" ceiling "pids applied"
	t_assert
}

test_ceiling_from_environment() {
	mk_ceiling
	CORDON_CEILING="$C" cordon_run --rw "$WS/home/u" -- /bin/sh -c 'touch started'
	refused "write $WS/home/u: not under"
	t_assert
}

test_malformed_ceilings() {
	mk_ceiling
	printf '{\n  "limits": {"memory": "12Q"}\n}\n' >"$T_TMP/bad.json"
	cordon_run --ceiling "$T_TMP/bad.json" -- /bin/sh -c 'touch started'
	expect_eq "$(field .status)" setup-error "status"
	expect_match "$ERR" "ceiling: $T_TMP/bad.json:2:24: \"limits.memory\": malformed size" "position"
	printf '{"filesystem": {"write": ["/a"]}, "filesystem": {}}' >"$T_TMP/dup.json"
	cordon_run --ceiling "$T_TMP/dup.json" -- /bin/true
	expect_match "$ERR" "dup.json:1:35: duplicate key \"filesystem\"" "duplicate"
	cordon_run --ceiling "$T_TMP/missing.json" -- /bin/true
	expect_match "$ERR" "missing.json: No such file" "missing ceiling is an error, not no ceiling"
	[ ! -e started ] || fail "started"
	t_assert
}

# explain --json must agree with what a real run sees.
agree() { # OPTIONS... -- : compares explain with a run of a probe script
	local e="$T_TMP/e.json"
	# the same request as cordon_run makes (it adds the build directory)
	# exit status: 0 would run, 1 would not (the verdict says why)
	local erc=0
	"$CORDON" explain --json --ro "$BUILD" "$@" >"$e" || erc=$?
	[ $erc = 0 ] || [ $erc = 1 ] || { fail "explain failed ($erc)"; return; }
	local wr=1
	[ "$(jq -r .verdict "$e")" = "would run" ] && wr=0
	[ $erc = $wr ] || fail "explain's exit status $erc for verdict $(jq -r .verdict "$e")"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain.schema.json" "$e" \
		|| fail "explain output does not validate"
	local verdict
	verdict=$(jq -r .verdict "$e")
	# The probe: for every path explain lists as ro/rw, test what the run can do.
	local script='for p in '"$(jq -r '.paths[] | select(.mode=="ro" or .mode=="rw") | .path' "$e" | grep -vx "$BUILD" | tr '\n' ' ')"'; do
		if [ -w "$p" ] && touch "$p/.cordon-w" 2>/dev/null; then rm -f "$p/.cordon-w"; echo "$p rw"; elif [ -r "$p" ]; then echo "$p ro"; else echo "$p none"; fi; done'
	cordon_run "$@" -- /bin/sh -c "$script"
	case "$verdict" in
	"would run")
		expect_match "$(field .status)" "^(ok|exit-nonzero)$" "explain said it would run: $ERR"
		local want got
		want=$(jq -r '.paths[] | select(.mode=="ro" or .mode=="rw") | "\(.path) \(.mode)"' "$e" | grep -v "^$BUILD " | sort)
		got=$(printf '%s\n' "$OUT" | sort)
		expect_eq "$got" "$want" "paths seen by the run"
		expect_eq "$(field -c '.limits')" "$(jq -c '.limits' "$e")" "limits"
		;;
	*)
		expect_eq "$(field .status)" "${verdict%%:*}" "status predicted by explain"
		expect_eq "$(field .reason)" "${verdict#*: }" "reason predicted by explain"
		;;
	esac
}

test_explain_agrees_with_runs() {
	mk_ceiling
	mkdir -p ro rw
	echo '{"limits": {"memory": "64M", "pids": 10}}' >p1.json
	echo '{"filesystem": {"read": ["./ro"], "write": ["./rw"], "tmpfs": ["/scratch"]}}' >p2.json
	echo '{"limits": {"memory": "1M"}, "ledger": [{"alloc": "a", "bytes": "2M"}]}' >p3.json
	echo '{"filesystem": {"read": ["/nonexistent"]}}' >p4.json
	echo '{"limits": {"wall_time": 3, "cpu_time": 2, "output": "1M", "file_size": "4M"}}' >p5.json
	echo '{"network": {"allow": ["a.example.com:443"]}}' >p6.json
	local n=0
	agree; n=$((n + 1))
	agree --policy p1.json; n=$((n + 1))
	agree --policy p2.json; n=$((n + 1))
	agree --policy p3.json; n=$((n + 1))
	agree --policy p4.json; n=$((n + 1))
	agree --policy p5.json; n=$((n + 1))
	agree --policy p6.json; n=$((n + 1))
	agree --ro "$WS/data"; n=$((n + 1))
	agree --ceiling "$C"; n=$((n + 1))
	agree --ceiling "$C" --ro "$WS/data" --tmpfs /t; n=$((n + 1))
	agree --ceiling "$C" --rw "$WS/home/u"; n=$((n + 1))
	agree --ceiling "$C" --policy p1.json --time-limit 1; n=$((n + 1))
	agree --ceiling "$C" --memory-limit 2G; n=$((n + 1))
	expect_eq "$n" 13 "policies compared"
	t_assert
}

test_explain_refuses_what_run_refuses() {
	# Every pre-flight refusal of a run is explain's too (exit 1, the same
	# reason), and no secret value is in explain's output.
	mkdir -p "$T_TMP/s"
	printf 'a-long-secret-value' >"$T_TMP/s/real"
	ln -s "$T_TMP/s/real" "$T_TMP/s/link"
	mkfifo "$T_TMP/s/fifo"
	printf 'abc' >"$T_TMP/s/short"
	local a erc rc
	for a in "--secret CORDON_T_NOPE" "--secret X=file:$T_TMP/s/none" "--secret X=file:$T_TMP/s/link" \
		"--secret CORDON_T_SHORT" "--secret X=file:$T_TMP/s/short" "--secret X=file:$T_TMP/s/fifo" \
		"--cwd $T_TMP/none" "--cwd $T_TMP/s/real" "--tmpfs /proc" "--tmpfs /proc/sys"; do
		erc=0
		env CORDON_T_SHORT=abc "$CORDON" explain $a -- /bin/true >e.out 2>&1 || erc=$?
		rc=0
		env CORDON_T_SHORT=abc timeout 20 "$CORDON" run $a -- /bin/true >r.out 2>&1 || rc=$?
		expect_eq "$erc/$rc" 1/125 "explain and run for $a ($(cat e.out | grep verdict) / $(cat r.out))"
		expect_eq "$(grep verdict e.out | sed 's/^verdict: //')" "$(head -1 r.out | sed 's/^cordon: //')" "the same reason for $a"
	done
	# What both accept.
	erc=0
	env CORDON_T_LONG=a-long-secret-value "$CORDON" explain --secret CORDON_T_LONG --secret Y=file:"$T_TMP/s/real" --cwd /tmp \
		--tmpfs /srv/x --json -- /bin/true >e.out 2>&1 || erc=$?
	expect_eq "$erc/$(jq -r .verdict e.out)" "0/would run" "explain accepts ($(cat e.out))"
	grep -q a-long-secret-value e.out && fail "a secret value in explain's output"
	rc=0
	env CORDON_T_LONG=a-long-secret-value "$CORDON" run --secret CORDON_T_LONG --secret Y=file:"$T_TMP/s/real" --cwd /tmp \
		--tmpfs /srv/x -- /bin/true >r.out 2>&1 || rc=$?
	expect_eq "$rc" 0 "run accepts ($(cat r.out))"
	t_assert
}

for t in test_inside_the_ceiling_runs test_path_beyond_ceiling test_symlink_and_dotdot_spellings \
	test_workspace_itself_checked test_endpoint_secret_syscall_weaker_port_beyond \
	test_secret_file_cannot_be_swapped test_limits_above_and_applied test_ceiling_from_environment \
	test_malformed_ceilings test_explain_agrees_with_runs test_explain_refuses_what_run_refuses; do
	t_run $t
done
