/* A denial the observer records, attributed (in a session) to the process
 * group, in the run's PID namespace, of the process that made the call. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <limits.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "sup-observe-deny.h"
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "proxy.h"
#include "observe.h"
#include "landlock.h"
#include "protect.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "seccomp-policy.h"
#include "systab.h"
#include "sockdiag.h"


/* The process group, in the run's PID namespace, of pid (ours): where a
 * session's denial is attributed (each exec leads a group of its own).
 * pid is stopped in the notified call, so it exists; 0 when its group's
 * leader is gone or /proc does not tell. */
int observer_run_pgid(pid_t pid)
{
	char p[64], b[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	b[n] = '\0';
	/* pid (comm) state ppid pgrp ...: comm may hold anything, so from
	 * its last ')'. */
	char *q = strrchr(b, ')');
	int ppid, pgrp;
	if (!q || sscanf(q + 1, " %*c %d %d", &ppid, &pgrp) != 2 || pgrp <= 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/status", pgrp);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	b[n] = '\0';
	/* NSpid: one pid per namespace, outermost first: the run's is last. */
	char *ns = strstr(b, "\nNSpid:");
	if (!ns)
		return 0;
	char *end = strchr(ns + 1, '\n');
	if (end)
		*end = '\0';
	char *last = strrchr(ns, '\t');
	int inner = last ? atoi(last + 1) : 0;
	return inner > 0 ? inner : 0;
}

int observer_deny(struct observer *o, struct run_report *rep, const char *kind, const char *target)
{
	return report_add_denial_by(rep, kind, target, rep->attribute ? observer_run_pgid((pid_t)o->req->pid) : 0);
}

