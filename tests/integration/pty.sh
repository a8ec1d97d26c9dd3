# cordon run --pty: the run gets a pty of its own (in its own devpts),
# relayed to cordon's terminal, everything still captured.
. "$(dirname "$0")/../lib.sh"

# drive ROWS COLS STEPS [cordon run options...] COMMAND...: cordon run --pty on a
# terminal of the test's own (tests/ptydrive.py); sets J (its JSON), OUT
# (what the terminal showed, CRs dropped), RC, and R (the report).
drive() {
	local rows=$1 cols=$2 steps=$3
	shift 3
	R=$(mktemp "$T_TMP/report.XXXXXX")
	J=$(python3 "$TOP/tests/ptydrive.py" "$rows" "$cols" "$steps" -- "$CORDON" run --pty --report "$R" --ro "$BUILD" "$@")
	OUT=$(jq -r .out <<<"$J" | tr -d '\r')
	RC=$(jq -r .exit <<<"$J")
	keep_report "$R"
	[ "$(jq -r .failed <<<"$J")" = null ] || fail "driver: $(jq -r .failed <<<"$J"); terminal showed: $(head -c 300 <<<"$OUT"); stderr: $(jq -r .stderr <<<"$J")"
}

test_pty_is_the_runs_own_terminal() {
	drive 24 80 '[]' /bin/sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-tty; stat -L -c "dev=%d" /proc/self/fd/0; ps -o tty= -p $$'
	expect_match "$OUT" '^/dev/pts/[0-9]+$' "tty names a pts of the run: $OUT"
	expect_match "$OUT" '^all-tty$' "stdin, stdout and stderr are the terminal"
	local outer inner
	outer=$(jq -r .dev <<<"$J")
	inner=$(sed -n 's/^dev=//p' <<<"$OUT")
	[ -n "$inner" ] && [ "$inner" != "$outer" ] || fail "the run's pty is on a devpts of its own (dev $inner), not cordon's terminal's (dev $outer)"
	expect_match "$OUT" '^pts/[0-9]+$' "it is the command's controlling terminal"
	expect_eq "$(field .status) $RC" "ok 0" "status"
	t_assert
}

test_pty_echo_round_trip() {
	# Typed keys reach the command through the run's pty, echoed by its line
	# discipline; ^D there is end of file. Typed only once "ready" and its
	# line end showed: the kernel writes a line's text and its CR LF in two
	# steps, and an echo can come between them (seen in CI's loaded guest:
	# "ready" "ping\r\n" "\r\n" "ping\r\n").
	drive 24 80 '[["expect", "ready\r\n"], ["send", "ping\n"], ["expect", "ping\r\nping\r\n"], ["send", "pong\n"], ["expect", "pong\r\npong\r\n"], ["send", "\u0004"]]' \
		/bin/sh -c 'echo ready; exec cat'
	expect_eq "$OUT" $'ready\nping\nping\npong\npong' "what the terminal showed"
	expect_eq "$(field .status) $RC" "ok 0" "cat ended at ^D"
	expect_eq "$(jq -r .mode_restored <<<"$J")" true "cordon's terminal mode is put back"
	t_assert
}

test_pty_stdin_not_a_terminal() {
	# Piped input is typed into the run's pty; its end is VEOF (twice after
	# a partial line), so cat ends.
	R=$T_TMP/r.json
	OUT=$(printf 'hello\n' | "$CORDON" run --pty --report "$R" --time-limit 60s -- cat)
	expect_eq "$OUT" $'hello\r\nhello\r' "echo and cat's copy, through the pty"
	expect_eq "$(field .status)" ok "ended by end of input"
	OUT=$(printf 'abc' | "$CORDON" run --pty --report "$R" --time-limit 60s -- cat)
	expect_eq "$OUT" "abcabc" "a partial line, then end of file"
	expect_eq "$(field .status)" ok "ended by end of input"
	OUT=$("$CORDON" run --pty --report "$R" -- /bin/sh -c 'tty >/dev/null && echo tty; stty size' </dev/null)
	expect_eq "$OUT" $'tty\r\n24 80\r' "a terminal of 24x80 without one outside"
	keep_report "$R"
	t_assert
}

test_pty_window_size_and_sigwinch() {
	drive 33 101 '[["expect", "ready"], ["resize", 40, 120], ["expect", "40 120"]]' \
		/bin/sh -c 'stty size; trap "stty size; exit 0" WINCH; echo ready; while :; do sleep 0.05; done'
	expect_match "$OUT" '^33 101$' "the size at start is cordon's terminal's"
	expect_match "$OUT" '^40 120$' "a change (SIGWINCH) reaches the run"
	expect_eq "$(field .status) $RC" "ok 0" "status"
	t_assert
}

test_pty_output_counted_hashed_redacted() {
	drive 24 80 '[]' --secret TOK -- /bin/sh -c 'echo "$TOK"; printf "%s" "${TOK%????}"; sleep 0.2; printf "%s\n" "${TOK#???????????}"'

	local outer
	outer=$(jq -r .out <<<"$J")
	expect_nomatch "$outer" "pty-secret-9876" "the secret never reaches the terminal"
	expect_eq "$OUT" $'[REDACTED:TOK]\n[REDACTED:TOK]' "redacted, also when split across writes"
	expect_eq "$(field .stdout.bytes)" "$(jq -j .out <<<"$J" | wc -c)" "stdout.bytes counts what the pty showed"
	expect_eq "$(field .stdout.sha256)" "$(jq -j .out <<<"$J" | sha256sum | cut -d' ' -f1)" "stdout.sha256 is its hash"
	expect_eq "$(field .stderr.bytes)" 0 "stderr is the pty too"
	t_assert
}
export TOK=pty-secret-9876

test_pty_output_limit_kills() {
	drive 24 80 '[]' --output-limit 4K -- /bin/sh -c 'yes'
	expect_eq "$(field .status) $RC" "output-limit 120" "stopped at the limit"
	[ "$(field .stdout.bytes)" -le 4096 ] || fail "captured $(field .stdout.bytes) bytes past the limit"
	expect_eq "$(jq -r .mode_restored <<<"$J")" true "cordon's terminal mode is put back"
	t_assert
}

test_pty_terminal_restored_when_killed() {
	drive 24 80 '[["expect", "started"], ["signal", "TERM"]]' /bin/sh -c 'echo started; exec sleep 1000'
	expect_eq "$(field .status)" interrupted "cordon stopped by SIGTERM"
	expect_eq "$(jq -r .mode_restored <<<"$J")" true "terminal mode after SIGTERM"
	drive 24 80 '[["expect", "started"]]' --time-limit 1s -- /bin/sh -c 'echo started; exec sleep 1000'
	expect_eq "$(field .status)" timeout "the time limit"
	expect_eq "$(jq -r .mode_restored <<<"$J")" true "terminal mode after a timeout"
	t_assert
}

test_pty_terminal_raw_during_the_run() {
	# The keys go to the run, not to cordon's terminal: ^C is a byte for the
	# run's own line discipline (SIGINT to the command there), not SIGINT to
	# cordon.
	drive 24 80 '[["expect", "ready"], ["send", "\u0003"], ["expect", "got-int"]]' \
		/bin/sh -c 'trap "echo got-int; exit 3" INT; echo ready; while :; do sleep 0.05; done'
	expect_match "$OUT" 'got-int$' "^C reached the command as SIGINT"
	expect_eq "$(field .status) $(field .exit_code)" "exit-nonzero 3" "the command ended itself, cordon was not interrupted"
	expect_eq "$(jq -r .mode_restored <<<"$J")" true "terminal mode"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
