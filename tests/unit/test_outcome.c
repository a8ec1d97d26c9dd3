/* The outcome of a run from its facts (lib/sup-outcome.c): one row per
 * status and the edge cases between them, then invariants over every
 * combination of facts. */
#include "unit.h"
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include "cleanup.h"
#include "sup-outcome.h"

/* Rows start from "nothing happened" and set what differs. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define F(...) ((struct run_facts){.refused = ST_COUNT, .forced = ST_COUNT, __VA_ARGS__})
#define EXITED(n) .exec_ok = true, .got_exit = true, .wstatus = W_EXITCODE(n, 0)
#define KILLED(s) .exec_ok = true, .got_exit = true, .wstatus = W_EXITCODE(0, s)
#define LIMIT(l) .limits_hit[l] = true
#define SEC 1000000000ULL

struct row {
	const char *name;
	struct run_facts f;
	enum run_status status;
	int exit_code, signal, cordon_exit;
	const char *reason; /* a substring of the reason; NULL: no reason */
	int limit;          /* a limit that must be hit, -1 none */
	bool foreign_abi;
};

static const struct row rows[] = {
	{"ok", F(EXITED(0)), ST_OK, 0, 0, 0, NULL, -1, false},
	{"ok, a pids limit reached on the way", F(EXITED(0), .pids_max_hits = 3), ST_OK, 0, 0, 0, NULL, LIM_PIDS, false},
	{"exit-nonzero", F(EXITED(3)), ST_EXIT_NONZERO, 3, 0, 3, NULL, -1, false},
	{"exit-nonzero 255", F(EXITED(255)), ST_EXIT_NONZERO, 255, 0, 255, NULL, -1, false},
	{"signaled", F(KILLED(SIGSEGV)), ST_SIGNALED, -1, SIGSEGV, 128 + SIGSEGV, NULL, -1, false},
	{"signaled: SIGKILL under the cpu limit",
	 F(KILLED(SIGKILL), .cpu_limit_set = true, .cpu_limit_ns = 2 * SEC, .cpu_used_ns = SEC),
	 ST_SIGNALED, -1, SIGKILL, 137, NULL, -1, false},
	{"signaled: SIGSYS without a filter", F(KILLED(SIGSYS)), ST_SIGNALED, -1, SIGSYS, 128 + SIGSYS, NULL, -1, false},
	{"signaled: killed from outside after exec",
	 F(.exec_ok = true, .init_code = CLD_KILLED, .init_status = SIGKILL),
	 ST_SIGNALED, -1, SIGKILL, 137, "killed from outside", -1, false},
	{"signaled: init's end unknown after exec", F(.exec_ok = true), ST_SIGNALED, -1, SIGKILL, 137,
	 "killed from outside", -1, false},
	{"signaled: init exited after exec without the command's status",
	 F(.exec_ok = true, .init_code = CLD_EXITED, .init_status = 0), ST_SIGNALED, -1, SIGKILL, 137,
	 "exited with status 0", -1, false},
	{"timeout", F(.exec_ok = true, .forced = ST_TIMEOUT, LIMIT(LIM_WALL)), ST_TIMEOUT, -1, SIGKILL, 124, NULL,
	 LIM_WALL, false},
	{"timeout, the command's death seen", F(KILLED(SIGKILL), .forced = ST_TIMEOUT, LIMIT(LIM_WALL)), ST_TIMEOUT,
	 -1, SIGKILL, 124, NULL, LIM_WALL, false},
	{"timeout, the command exited as it was killed", F(EXITED(0), .forced = ST_TIMEOUT, LIMIT(LIM_WALL)),
	 ST_TIMEOUT, 0, 0, 124, NULL, LIM_WALL, false},
	{"cpu-limit: SIGKILL at the limit",
	 F(KILLED(SIGKILL), .cpu_limit_set = true, .cpu_limit_ns = SEC, .cpu_used_ns = SEC), ST_CPU_LIMIT, -1,
	 SIGKILL, 119, NULL, LIM_CPU, false},
	{"cpu-limit: SIGXCPU", F(KILLED(SIGXCPU), .cpu_limit_set = true, .cpu_limit_ns = SEC), ST_CPU_LIMIT, -1,
	 SIGXCPU, 119, NULL, LIM_CPU, false},
	{"cpu-limit: stopped by the supervisor",
	 F(.exec_ok = true, .forced = ST_CPU_LIMIT, LIMIT(LIM_CPU), .cpu_limit_set = true), ST_CPU_LIMIT, -1,
	 SIGKILL, 119, NULL, LIM_CPU, false},
	{"memory-limit", F(KILLED(SIGKILL), .oom_kills = 1), ST_MEMORY_LIMIT, -1, SIGKILL, 118, NULL, LIM_MEMORY,
	 false},
	{"memory-limit: a child killed, the command exited 1", F(EXITED(1), .oom_kills = 2), ST_MEMORY_LIMIT, 1, 0,
	 118, NULL, LIM_MEMORY, false},
	{"memory-limit: before exec", F(.oom_kills = 1, .init_code = CLD_KILLED, .init_status = SIGKILL),
	 ST_MEMORY_LIMIT, -1, 0, 118, "never started", LIM_MEMORY, false},
	{"output-limit", F(.exec_ok = true, .forced = ST_OUTPUT_LIMIT, LIMIT(LIM_OUTPUT)), ST_OUTPUT_LIMIT, -1,
	 SIGKILL, 120, NULL, LIM_OUTPUT, false},
	{"file-size-limit", F(KILLED(SIGXFSZ)), ST_FILE_SIZE_LIMIT, -1, SIGXFSZ, 121, NULL, LIM_FILE_SIZE, false},
	{"denied: the filter's kill", F(KILLED(SIGSYS), .seccomp = true), ST_DENIED, -1, SIGSYS, 122, NULL, -1,
	 true},
	{"denied: kill on violation", F(.exec_ok = true, .forced = ST_DENIED, .seccomp = true), ST_DENIED, -1,
	 SIGKILL, 122, NULL, -1, false},
	{"unauthorized", F(.refused = ST_UNAUTHORIZED, .reason = "read /etc: not in the ceiling"),
	 ST_UNAUTHORIZED, -1, 0, 123, "not in the ceiling", -1, false},
	{"infeasible", F(.refused = ST_INFEASIBLE, .reason = "the ledger peaks at 80M, above 64M"),
	 ST_INFEASIBLE, -1, 0, 117, "peaks at 80M", -1, false},
	{"setup-error", F(.setup_failed = true, .reason = "mount /opt: No such file or directory"),
	 ST_SETUP_ERROR, -1, 0, 125, "mount /opt", -1, false},
	{"setup-error without a message of its own", F(.setup_failed = true), ST_SETUP_ERROR, -1, 0, 125,
	 "setting up the boundary failed", -1, false},
	/* The defect of issue 14: init died before exec and said nothing. */
	{"setup-error: init killed before exec, no message",
	 F(.init_code = CLD_KILLED, .init_status = SIGKILL), ST_SETUP_ERROR, -1, 0, 125,
	 "before the command started, without a message (it was killed by SIGKILL)", -1, false},
	{"setup-error: init exited before exec, no message", F(.init_code = CLD_EXITED, .init_status = 1),
	 ST_SETUP_ERROR, -1, 0, 125, "it exited with status 1", -1, false},
	{"setup-error: init's end unknown before exec", F(0), ST_SETUP_ERROR, -1, 0, 125,
	 "before the command started", -1, false},
	{"setup-error wins over a forced status", F(.setup_failed = true, .reason = "x", .forced = ST_TIMEOUT),
	 ST_SETUP_ERROR, -1, 0, 125, "x", -1, false},
	{"setup-error wins over the kernel's oom kill", F(.setup_failed = true, .reason = "y", .oom_kills = 1),
	 ST_SETUP_ERROR, -1, 0, 125, "y", LIM_MEMORY, false},
	{"setup-error after exec (the observer failed): the status is kept",
	 F(KILLED(SIGKILL), .setup_failed = true, .reason = "observer"), ST_SETUP_ERROR, -1, SIGKILL, 125,
	 "observer", -1, false},
	{"interrupted", F(.exec_ok = true, .forced = ST_INTERRUPTED, .forced_signal = SIGINT), ST_INTERRUPTED, -1,
	 SIGKILL, 130, "cordon received", -1, false},
	{"interrupted before exec: no signal ended a command",
	 F(.forced = ST_INTERRUPTED, .forced_signal = SIGTERM), ST_INTERRUPTED, -1, 0, 130, "cordon received", -1,
	 false},
	{"interrupted after the fork, before MSG_EXEC_OK: the command ran and was killed",
	 F(.cmd_forked = true, .forced = ST_INTERRUPTED), ST_INTERRUPTED, -1, SIGKILL, 130, "cancel_fd", -1, false},
	{"a stopped status is no exit", F(.exec_ok = true, .got_exit = true, .wstatus = W_STOPCODE(SIGSTOP)),
	 ST_SIGNALED, -1, SIGKILL, 137, "killed from outside", -1, false},
};

static void test_rows(void **st)
{
	bool seen[ST_COUNT] = {false};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct run_outcome o;
		run_outcome_decide(&r->f, &o);
		if (o.status != r->status || o.exit_code != r->exit_code || o.signal != r->signal ||
		    o.cordon_exit != r->cordon_exit || o.foreign_abi_kill != r->foreign_abi ||
		    (r->reason ? !strstr(o.reason, r->reason) : o.reason[0] != '\0') ||
		    (r->limit >= 0 && !o.limits_hit[r->limit]))
			fail_msg("%s: got %s exit_code %d signal %d cordon %d reason '%s'", r->name,
				 status_name(o.status), o.exit_code, o.signal, o.cordon_exit, o.reason);
		/* Only the limits the row names (and a forced status's own). */
		for (int l = 0; l < LIM_COUNT; l++)
			if (o.limits_hit[l] && l != r->limit)
				fail_msg("%s: limit %d hit too", r->name, l);
		seen[o.status] = true;
	}
	for (int s = 0; s < ST_COUNT; s++)
		if (!seen[s])
			fail_msg("no row for status %s", status_name((enum run_status)s));
}

/* Every combination of the facts that matter, with the invariants every
 * outcome keeps. */
static void test_invariants(void **st)
{
	const int wstatus[] = {W_EXITCODE(0, 0), W_EXITCODE(7, 0), W_EXITCODE(0, SIGKILL), W_EXITCODE(0, SIGSYS),
			       W_EXITCODE(0, SIGXCPU), W_EXITCODE(0, SIGXFSZ), W_EXITCODE(0, SIGSEGV) | 0x80,
			       W_STOPCODE(SIGTRAP)};
	const int init_end[][2] = {{0, 0}, {CLD_EXITED, 0}, {CLD_EXITED, 1}, {CLD_KILLED, SIGKILL}};
	/* What the supervisor forces (kill_run), or nothing. */
	const enum run_status forced_by[] = {ST_COUNT, ST_TIMEOUT, ST_CPU_LIMIT, ST_OUTPUT_LIMIT, ST_DENIED,
					     ST_INTERRUPTED, ST_SETUP_ERROR};
	size_t n = 0;
	for (size_t fi = 0; fi < ARRAY_SIZE(forced_by); fi++)
	for (int bits = 0; bits < 64; bits++)
	for (size_t w = 0; w < ARRAY_SIZE(wstatus); w++)
	for (size_t ie = 0; ie < ARRAY_SIZE(init_end); ie++) {
		struct run_facts f;
		run_facts_init(&f);
		enum run_status forced = forced_by[fi];
		f.forced = forced;
		f.exec_ok = bits & 1;
		f.got_exit = (bits & 2) && f.exec_ok; /* MSG_EXIT comes after MSG_EXEC_OK */
		f.setup_failed = bits & 4;
		f.oom_kills = (bits & 8) ? 1 : 0;
		f.seccomp = bits & 16;
		f.cpu_limit_set = bits & 32;
		f.cpu_limit_ns = SEC;
		f.cpu_used_ns = SEC;
		f.wstatus = wstatus[w];
		f.init_code = init_end[ie][0];
		f.init_status = init_end[ie][1];
		if (forced == ST_INTERRUPTED)
			f.forced_signal = SIGINT;
		struct run_outcome o;
		run_outcome_decide(&f, &o);
		n++;
		char what[160];
		snprintf(what, sizeof(what), "forced %d bits %d wstatus %#x init %d/%d -> %s signal %d", forced, bits,
			 (unsigned)f.wstatus, f.init_code, f.init_status, status_name(o.status), o.signal);
		/* "signaled" never comes without a signal. */
		if (o.status == ST_SIGNALED && o.signal <= 0)
			fail_msg("%s: signaled without a signal", what);
		/* A command that never started neither succeeded, nor failed,
		 * nor was signaled, and no signal ended it. */
		if (!f.exec_ok && (o.status == ST_OK || o.status == ST_EXIT_NONZERO || o.status == ST_SIGNALED ||
				   o.signal != 0 || o.exit_code != -1))
			fail_msg("%s: the command never started", what);
		/* ok only from an exit 0 that nothing else overrides. */
		if (o.status == ST_OK && (o.exit_code != 0 || f.setup_failed || f.oom_kills || f.forced != ST_COUNT))
			fail_msg("%s: ok", what);
		if (o.status == ST_SETUP_ERROR && !o.reason[0])
			fail_msg("%s: setup-error without a reason", what);
		if (f.setup_failed && o.status != ST_SETUP_ERROR)
			fail_msg("%s: a setup failure is a setup-error", what);
		if (o.exit_code >= 0 && o.signal)
			fail_msg("%s: both an exit code and a signal", what);
		if (o.cordon_exit != status_exit_code(o.status, o.exit_code, o.signal) ||
		    (o.status != ST_OK && o.cordon_exit == 0))
			fail_msg("%s: cordon's exit %d", what, o.cordon_exit);
		if (f.oom_kills && !o.limits_hit[LIM_MEMORY])
			fail_msg("%s: the oom kill is a memory limit hit", what);
	}
	assert_true(n > 1000);
}

/* Refusals carry the preflight's reason and nothing of a run. */
static void test_refusals(void **st)
{
	const enum run_status r[] = {ST_UNAUTHORIZED, ST_INFEASIBLE};
	for (size_t i = 0; i < ARRAY_SIZE(r); i++) {
		struct run_facts f;
		run_facts_init(&f);
		f.refused = r[i];
		f.reason = "why";
		f.setup_failed = true; /* the refusal comes first */
		struct run_outcome o;
		run_outcome_decide(&f, &o);
		assert_int_equal(o.status, r[i]);
		assert_string_equal(o.reason, "why");
		assert_int_equal(o.exit_code, -1);
		assert_int_equal(o.signal, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests_name("outcome", tests, NULL, NULL);
}
