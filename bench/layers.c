/* bench-layers N: the cost of each enforcement layer of issue 3, measured
 * where it is paid: the filter compile and the Landlock plan in the
 * supervisor; the Landlock ruleset and the seccomp load in a fresh child. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "landlock.h"
#include "model.h"
#include "observe.h"
#include "plan.h"
#include "pol-plan.h"
#include "policy.h"
#include "seccomp-policy.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	cordon_policy *p = policy_new();
	cordon_error e;
	struct cordon_mount m[] = {{MOUNT_RW, "/tmp", 0, SRC_DEFAULT}};
	struct run_plan plan = {.mounts = m, .nmounts = 1};
	double *t[4];
	for (int k = 0; k < 4; k++)
		t[k] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		struct seccomp_plan sp;
		struct landlock_plan lp;
		double a = now();
		if (seccomp_build(p, true, observer_calls, &sp, &e) < 0)
			return fprintf(stderr, "%s\n", e.msg), 1;
		double b = now();
		if (model_build(&plan.model, &plan, p, &e) < 0 ||
		    landlock_prepare(&plan.model, 0, landlock_abi(), NULL, 0, &lp, &e) < 0)
			return fprintf(stderr, "%s\n", e.msg), 1;
		model_free(&plan.model);
		double c = now();
		int pfd[2];
		if (pipe(pfd) < 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0) {
			double r[2];
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			double x = now();
			if (landlock_apply(&lp, &e) < 0)
				_exit(1);
			double y = now();
			int listener;
			if (seccomp_apply(&sp, &listener, &e) < 0)
				_exit(2);
			double z = now();
			r[0] = y - x;
			r[1] = z - y;
			if (write(pfd[1], r, sizeof(r)) != sizeof(r))
				_exit(3);
			_exit(0);
		}
		double r[2] = {0, 0};
		if (read(pfd[0], r, sizeof(r)) != sizeof(r))
			return fprintf(stderr, "child failed\n"), 1;
		waitpid(pid, NULL, 0);
		close(pfd[0]);
		close(pfd[1]);
		t[0][i] = b - a;
		t[1][i] = c - b;
		t[2][i] = r[0];
		t[3][i] = r[1];
		seccomp_plan_free(&sp);
		landlock_plan_free(&lp);
	}
	const char *names[] = {"seccomp: compile the filter (supervisor)", "landlock: plan the rules (supervisor)",
			       "landlock: create + rules + restrict_self (init)", "seccomp: load the filter + listener (init)"};
	for (int k = 0; k < 4; k++) {
		qsort(t[k], (size_t)n, sizeof(double), cmp);
		printf("%-50s median %.3f ms  p90 %.3f ms\n", names[k], t[k][n / 2], t[k][n * 9 / 10]);
	}
	policy_free(p);
	return 0;
}
