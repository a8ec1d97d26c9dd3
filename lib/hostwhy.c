/* Why this host refuses what cordon needs (hostwhy.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hostwhy.h"

/* The first line of a small /proc file, without its newline; "" if absent. */
static void read_line(const char *path, char *out, size_t n)
{
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t r = read(fd, out, n - 1);
	close(fd);
	out[r > 0 ? r : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

int hostwhy_seccomp_mode(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	char line[256];
	int mode = -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Seccomp:", 8) == 0) {
			mode = atoi(line + 8);
			break;
		}
	fclose(f);
	return mode;
}

static const char *errname(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case EACCES: return "EACCES";
	case ENOSPC: return "ENOSPC";
	case EUSERS: return "EUSERS";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	default: return "an error";
	}
}

void hostwhy_userns(int err, bool privileged, char *out, size_t n)
{
	char v[64];
	read_line("/proc/sys/user/max_user_namespaces", v, sizeof(v));
	if (strcmp(v, "0") == 0) {
		snprintf(out, n, "user namespaces: disabled by sysctl user.max_user_namespaces=0");
		return;
	}
	if (!privileged) {
		read_line("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v));
		if (strcmp(v, "0") == 0) {
			snprintf(out, n, "user namespaces: disabled for unprivileged users by sysctl kernel.unprivileged_userns_clone=0");
			return;
		}
	}
	if (err == ENOSPC || err == EUSERS) {
		snprintf(out, n, "user namespaces: none left (%s from clone3: the limit user.max_user_namespaces=%s, or 32 nested)",
			 errname(err), v[0] ? v : "?");
		return;
	}
	if ((err == EPERM || err == ENOSYS || err == EACCES) && hostwhy_seccomp_mode() == 2) {
		snprintf(out, n, "user namespaces: refused by seccomp (%s from clone3: cordon runs under a filter, e.g. a container's profile or cordon itself)",
			 errname(err));
		return;
	}
	if (!privileged) {
		read_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof(v));
		if (strcmp(v, "1") == 0) {
			snprintf(out, n, "user namespaces: restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns=1)");
			return;
		}
	}
	if (err == EPERM) {
		snprintf(out, n, "user namespaces: refused (EPERM from clone3: no capability here, e.g. in a container without CAP_SYS_ADMIN, or a security module)");
		return;
	}
	snprintf(out, n, "user namespaces: clone3 failed (%s: %s)", errname(err), strerror(err));
}

void hostwhy_landlock(int err, char *out, size_t n)
{
	if (err == EOPNOTSUPP)
		snprintf(out, n, "Landlock: built into this kernel but not enabled (EOPNOTSUPP: add landlock to lsm= at boot)");
	else if (err == ENOSYS && hostwhy_seccomp_mode() == 2)
		snprintf(out, n, "Landlock: refused by seccomp or not in this kernel (ENOSYS from landlock_create_ruleset under a seccomp filter)");
	else if (err == ENOSYS)
		snprintf(out, n, "Landlock: not in this kernel (ENOSYS)");
	else
		snprintf(out, n, "Landlock: landlock_create_ruleset failed (%s: %s)", errname(err), strerror(err));
}

void hostwhy_call(const char *call, int err, char *out, size_t n)
{
	out[0] = '\0';
	if ((err == ENOSYS || err == EPERM) && hostwhy_seccomp_mode() == 2)
		snprintf(out, n, "%s: refused by seccomp (%s): cordon runs under a filter that refuses it (cordon nested in cordon, a container's profile)",
			 call, errname(err));
}
