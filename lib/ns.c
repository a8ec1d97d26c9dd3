#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "ns.h"

static int write_file(const char *path, const char *data, cordon_error *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "open %s", path);
	size_t len = strlen(data);
	if (write(fd, data, len) != (ssize_t)len)
		return cordon_err_errno(err, "write %s", path);
	return 0;
}

static int write_maps(pid_t pid, const char *uidmap, const char *gidmap, bool deny_setgroups,
		      cordon_error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (write_file(path, uidmap, err) < 0)
		return -1;
	if (deny_setgroups) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		if (write_file(path, "deny", err) < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	return write_file(path, gidmap, err);
}

int ns_write_maps(pid_t pid, uid_t host_uid, gid_t host_gid, bool privileged, cordon_error *err)
{
	char um[64], gm[64];
	snprintf(um, sizeof(um), "%u %u 1\n", SANDBOX_UID, (unsigned)host_uid);
	snprintf(gm, sizeof(gm), "%u %u 1\n", SANDBOX_GID, (unsigned)host_gid);
	return write_maps(pid, um, gm, !privileged, err);
}

int ns_idmap_userns(uid_t inside_uid, uid_t outside_uid, gid_t inside_gid, gid_t outside_gid,
		    cordon_error *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return cordon_err_errno(err, "pipe");
	/* A child that only holds the namespace until we have an fd to it. */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return cordon_err_errno(err, "clone(CLONE_NEWUSER) for the idmapped mount");
	}
	if (pid == 0) {
		char c;
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pipefd[0]);
	char um[64], gm[64], path[64];
	snprintf(um, sizeof(um), "%u %u 1\n", (unsigned)inside_uid, (unsigned)outside_uid);
	snprintf(gm, sizeof(gm), "%u %u 1\n", (unsigned)inside_gid, (unsigned)outside_gid);
	int fd = -1;
	if (write_maps(pid, um, gm, false, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cordon_err_errno(err, "open %s", path);
	}
	close(pipefd[1]); /* releases the child */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return fd;
}

int ns_loopback_up(cordon_error *err)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cordon_err_errno(err, "socket for loopback");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return cordon_err_errno(err, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return cordon_err_errno(err, "bring up lo");
	return 0;
}
