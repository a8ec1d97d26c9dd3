# Issue 14: the public API. An embedder (examples/embed) built against
# libcordon.so through include/cordon.h and pkg-config alone; the library
# exports that API and nothing else, reads no environment, and leaves the
# calling process as it found it.
. "$(dirname "$0")/../lib.sh"

EMBED="$BUILD/embed"

# embed_run [embed options] -- CMD...: with a memory limit, the build visible
embed_run() {
	printf '{"filesystem": {"read": ["%s"]}, "limits": {"memory": "64M"}}\n' "$BUILD" >"$T_TMP/policy.json"
	OUT=$("$EMBED" "$@" 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
}

test_embed_runs_a_command_and_reads_the_report() {
	embed_run "$T_TMP/policy.json" /bin/sh -c 'echo hello; exit 3'
	expect_eq "$OUT" $'hello\nstatus exit-nonzero, exit code 3, signal 0\nprocess state unchanged' "embed's output: $ERR"
	expect_eq "$RC" 3 "exit status as cordon run's"
	embed_run --json "$T_TMP/policy.json" /bin/sh -c 'kill -TERM $$'
	expect_match "$OUT" "^status signaled, exit code -1, signal 15" "signaled"
	printf '%s\n' "$OUT" | sed -n '/^{/,$p' >"$T_TMP/report.json"
	R="$T_TMP/report.json"
	keep_report "$R"
	expect_eq "$(field .status) $(field .signal)" "signaled SIGTERM" "the report's JSON"
	expect_eq "$RC" 143 "exit status"
	t_assert
}

test_embed_leaves_the_process_as_it_was() {
	# Dumpable flag, SIGPIPE and SIGUSR1 (the observer's) dispositions,
	# signal mask, RLIMIT_NOFILE, umask: the same after the run (embed
	# compares them), with file denials observed and on a setup-error.
	embed_run "$T_TMP/policy.json" /bin/sh -c 'cat /etc/shadow; ls /root; true'
	expect_match "$OUT" $'process state unchanged' "after a run with denials: $ERR"
	embed_run "$T_TMP/policy.json" /nonexistent
	expect_match "$OUT" $'status setup-error.*\nprocess state unchanged' "after a setup-error: $ERR"
	t_assert
}

test_library_reads_no_environment() {
	# A secret read from the host's environment: only from the environment
	# the caller hands over (cordon run hands over its own).
	cat >"$T_TMP/policy.json" <<POL
{"filesystem": {"read": ["$BUILD"]}, "secrets": {"TOKEN": {"env": "EMBED_TEST_TOKEN"}}}
POL
	OUT=$(EMBED_TEST_TOKEN=s3cr3t-value-x CORDON_CGROUP=bogus "$EMBED" "$T_TMP/policy.json" /bin/sh -c 'echo "$TOKEN"' 2>&1)
	expect_match "$OUT" "status setup-error.*the host variable EMBED_TEST_TOKEN is not set" "no environment given: $OUT"
	OUT=$(EMBED_TEST_TOKEN=s3cr3t-value-x "$EMBED" --env "$T_TMP/policy.json" /bin/sh -c 'echo "$TOKEN"' 2>&1)
	expect_eq "$OUT" $'[REDACTED:TOKEN]\nstatus ok, exit code 0, signal 0\nprocess state unchanged' "environment given"
	printf '{"filesystem": {"read": ["%s"]}, "limits": {"memory": "64M"}}\n' "$BUILD" >"$T_TMP/policy.json"
	OUT=$(CORDON_CGROUP=bogus "$EMBED" "$T_TMP/policy.json" /bin/true 2>&1)
	expect_match "$OUT" "^status ok" "CORDON_CGROUP not read: $OUT"
	OUT=$(CORDON_CGROUP=bogus "$EMBED" --env "$T_TMP/policy.json" /bin/true 2>&1)
	expect_match "$OUT" "CORDON_CGROUP=bogus: expected v1, v2 or none" "the CLI's variables, when given"
	t_assert
}

test_library_exports_only_the_api() {
	local syms bad
	syms=$(nm -D --defined-only "$BUILD/libcordon.so" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}')
	expect_match "$syms" "^cordon_run$" "cordon_run exported"
	bad=$(printf '%s\n' "$syms" | grep -v '^cordon_')
	expect_eq "$bad" "" "symbols outside cordon_*"
	# every exported function is declared in the public header
	local s
	for s in $syms; do
		grep -q "\b$s(" "$TOP/include/cordon.h" || fail "$s is not in include/cordon.h"
	done
	t_assert
}

test_embed_builds_with_pkg_config() {
	command -v pkg-config >/dev/null || { t_skip "no pkg-config"; return; }
	# A sanitized library needs its runtime in the program: meson's own
	# build of embed covers that build.
	nm -D --undefined-only "$BUILD/libcordon.so" | grep -q __asan_ && { t_skip "sanitizer build (meson builds examples/embed there)"; return; }
	local src="$TOP/examples/embed/embed.c" flags
	flags=$(PKG_CONFIG_PATH="$BUILD/meson-uninstalled" pkg-config --cflags --libs cordon-uninstalled) || { fail "pkg-config cordon-uninstalled"; t_assert; return; }
	# only include/cordon.h: no -I of lib/ needed
	cc -std=c17 -Wall -Wextra -Werror -o "$T_TMP/embed" "$src" $flags -Wl,-rpath,"$BUILD" 2>"$T_TMP/cc" || fail "build: $(cat "$T_TMP/cc")"
	printf '{"filesystem": {"read": ["%s"]}}\n' "$BUILD" >"$T_TMP/policy.json"
	OUT=$("$T_TMP/embed" "$T_TMP/policy.json" /bin/echo built 2>&1)
	expect_eq "$OUT" $'built\nstatus ok, exit code 0, signal 0\nprocess state unchanged' "the pkg-config build runs"
	t_assert
}

# Issue 30: struct cordon_run_options carries its size. An embedder built
# against the first version of the struct (before cancel_fd; embed
# --options-ver0, with bytes that are not zero right after it) still runs, and
# the library reads none of what follows; a size below the first version's is
# refused with one clear line; a bigger one (a newer header) is taken while
# the bytes this library does not know are zero.
test_embed_old_options_struct_runs() {
	embed_run --options-ver0 "$T_TMP/policy.json" /bin/sh -c 'echo old; exit 4'
	expect_eq "$OUT" $'old\nstatus exit-nonzero, exit code 4, signal 0\nprocess state unchanged' "a first-version struct: $ERR"
	expect_eq "$RC" 4 "its exit status"
	# its fields are read: the environment it hands over, CORDON_CGROUP in it
	OUT=$(CORDON_CGROUP=bogus "$EMBED" --env --options-ver0 "$T_TMP/policy.json" /bin/true 2>&1)
	expect_match "$OUT" "CORDON_CGROUP=bogus: expected v1, v2 or none" "a first-version struct's envp"
	local n
	for n in 0 8; do
		embed_run --options-size $n "$T_TMP/policy.json" /bin/true
		expect_eq "$RC" 125 "size $n refused"
		expect_match "$ERR" "^embed: cordon_run_options.size $n: below the first version's [0-9]+ \(set it with cordon_run_options_init or CORDON_RUN_OPTIONS_INIT\)" "size $n: one clear line"
		expect_eq "$OUT" "" "size $n: nothing run"
	done
	embed_run --options-size 1024 "$T_TMP/policy.json" /bin/echo newer
	expect_eq "$OUT" $'newer\nstatus ok, exit code 0, signal 0\nprocess state unchanged' "a newer header, nothing new set: $ERR"
	embed_run --options-size 1024 --poison "$T_TMP/policy.json" /bin/echo newer
	expect_eq "$RC" 125 "a newer header with fields set refused"
	expect_match "$ERR" "^embed: cordon_run_options.size 1024: sets fields past this libcordon's [0-9]+ \(version [0-9.]+; the embedder was built against a newer cordon.h\)" "newer fields: one clear line"
	t_assert
}

test_cordon_version_matches_the_cli() {
	local cli lib proj
	cli=$("$CORDON" --version)
	lib=$("$EMBED" --version)
	# meson.build's version; where the tree has none (the VM guest's copy),
	# the header's, which meson setup holds equal to it.
	if [ -f "$TOP/meson.build" ]; then
		proj=$(sed -n "s/^  version : '\(.*\)',$/\1/p" "$TOP/meson.build")
	else
		proj=$(sed -n 's/^#define CORDON_VERSION "\(.*\)"$/\1/p' "$TOP/include/cordon.h")
	fi
	expect_match "$proj" '^[0-9]+\.[0-9]+\.[0-9]+$' "the project's version"
	expect_eq "$cli" "cordon $proj" "cordon --version"
	expect_eq "$lib" "cordon_version $proj, header $proj" "cordon_version() and CORDON_VERSION"
	t_assert
}

# cordon_run_options.cancel_fd: embed's helper process relays the run's
# output and makes the cancel pipe readable once the first line came (the
# run has started); the run ends then, as if cordon had received SIGINT,
# with its report. The wall_time limit is a backstop only (without the
# cancel the run would end as a timeout, and the test fail).
test_embed_cancel_fd_interrupts_the_run() {
	printf '{"filesystem": {"read": ["%s"]}, "limits": {"wall_time": "600s"}}\n' "$BUILD" >"$T_TMP/policy.json"
	OUT=$("$EMBED" --json --cancel-on-output "$T_TMP/policy.json" /bin/sh -c 'echo started; exec sleep 1000' 2>"$T_TMP/err")
	RC=$?
	expect_eq "$(printf '%s\n' "$OUT" | sed -n 1,3p)" $'started\nstatus interrupted, exit code -1, signal 9: the caller cancelled the run (cancel_fd); it was stopped\nprocess state unchanged' "cancelled: $(cat "$T_TMP/err")"
	expect_eq "$RC" 130 "exit status, as for SIGINT"
	printf '%s\n' "$OUT" | sed -n '/^{/,$p' >"$T_TMP/report.json"
	R="$T_TMP/report.json"
	keep_report "$R"
	expect_eq "$(field '.status + " " + (.exit_code|tostring) + " " + .signal')" "interrupted null SIGKILL" "the report"
	expect_match "$(field .reason)" "cancel_fd" "the report's reason"
	t_assert
}

# The same cancel, landing before init has told the supervisor that the
# command's exec succeeded (the command runs, and can reach the caller,
# before that message): made to happen, not hoped for. tests/syscall_hook.py
# holds init at its next stop once the command enters execve, so no
# MSG_EXEC_OK ever comes; the command prints, the caller cancels. The
# command ran and cordon killed it: the report says SIGKILL, and its output
# is collected, as for a cancel after the message.
test_embed_cancel_before_exec_ok_still_says_killed() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "tests/syscall_hook.py knows x86_64's system call numbers only"; return; }
	# Direct mode: the outputs are collected from the workspace itself.
	printf '{"filesystem": {"read": ["%s"], "workspace_mode": "direct"}, "limits": {"wall_time": "600s"}}\n' "$BUILD" >"$T_TMP/policy.json"
	: >"$T_TMP/hold"
	# LeakSanitizer cannot run under ptrace (the sanitizer build's embed).
	local ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	OUT=$(python3 "$TOP/tests/syscall_hook.py" -f -n -H "$T_TMP/hold" execve 0 'sh$' \
		"awk '/^PPid:/ {print \$2}' /proc/\$HOOK_PID/status >'$T_TMP/hold'" -- \
		"$EMBED" --json --cancel-on-output "$T_TMP/policy.json" /bin/sh -c 'echo run >made-by-run; echo started; exec sleep 1000' 2>"$T_TMP/err")
	RC=$?
	expect_match "$(cat "$T_TMP/err")" "syscall_hook: ran at execve" "init held at the command's exec"
	expect_match "$(cat "$T_TMP/hold")" '^[0-9]+$' "init's pid"
	expect_eq "$(printf '%s\n' "$OUT" | sed -n 1,2p)" $'started\nstatus interrupted, exit code -1, signal 9: the caller cancelled the run (cancel_fd); it was stopped' "cancelled: $(cat "$T_TMP/err")"
	expect_eq "$RC" 130 "exit status, as for SIGINT"
	printf '%s\n' "$OUT" | sed -n '/^{/,$p' >"$T_TMP/report.json"
	R="$T_TMP/report.json"
	keep_report "$R"
	expect_eq "$(field '.status + " " + .signal')" "interrupted SIGKILL" "the report"
	expect_eq "$(field '[.outputs[].path] | join(",")')" "made-by-run" "what the command wrote, in outputs"
	t_assert
}

for t in test_embed_runs_a_command_and_reads_the_report test_embed_leaves_the_process_as_it_was \
	test_library_reads_no_environment test_library_exports_only_the_api test_embed_builds_with_pkg_config \
	test_embed_old_options_struct_runs test_cordon_version_matches_the_cli test_embed_cancel_fd_interrupts_the_run \
	test_embed_cancel_before_exec_ok_still_says_killed; do
	t_run $t
done
