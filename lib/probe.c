#include <errno.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup-v1.h"
#include "cgroup-v2.h"
#include "cgroup.h"
#include "compat.h"
#include "hostwhy.h"
#include "probe.h"

/* As the run makes its namespaces: clone3 (a filter may treat clone and
 * clone3 apart; nested in cordon, clone3 is ENOSYS). */
static bool can_userns(int *err)
{
	struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	*err = errno;
	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(0);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return true;
}

void probe_host(struct host_features *f, const char *cgroup_force)
{
	memset(f, 0, sizeof(*f));
	f->privileged = geteuid() == 0;
	int uerr = 0;
	f->userns = can_userns(&uerr);
	if (!f->userns)
		hostwhy_userns(uerr, f->privileged, f->userns_why, sizeof(f->userns_why));
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	f->landlock_abi = abi > 0 ? (int)abi : 0;
	if (abi <= 0)
		hostwhy_landlock(errno, f->landlock_why, sizeof(f->landlock_why));
	f->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	unsigned int act = SECCOMP_RET_USER_NOTIF;
	f->seccomp_notify = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) == 0;
	const struct cgroup_ops *ops = cgroup_detect(cgroup_force, NULL);
	f->cgroup = ops ? ops->name : "none";
	if (ops == &cgroup_v1_ops) {
		f->cgroup_memory = f->cgroup_pids = true;
	} else if (ops == &cgroup_v2_ops) {
		char dir[4200];
		if (cg_v2_self_dir(dir, sizeof(dir)) == 0) {
			f->cgroup_memory = cg_v2_has(dir, "memory");
			f->cgroup_pids = cg_v2_has(dir, "pids");
		}
	}
}
