#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/ipv6.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "ident.h"
#include "ns.h"
#include "hostwhy.h"

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

int ns_write_maps(pid_t pid, const char *uid_map, const char *gid_map, bool deny_setgroups,
		  cordon_error *err)
{
	return write_maps(pid, uid_map, gid_map, deny_setgroups, err);
}

int ns_enter_nested(const char *um, const char *gm, cordon_error *err)
{
	/* Our own /proc/self files must belong to us to write the maps; the
	 * flag is reset to the system default by the next credential change. */
	prctl(PR_SET_DUMPABLE, 1);
	if (unshare(CLONE_NEWUSER) < 0)
		return cordon_err_errno(err, "unshare(CLONE_NEWUSER) for the command");
	ident_forget();
	/* Without CAP_SETGID in U1 (we are in U2 now), a gid map needs
	 * setgroups denied first; the command cannot call setgroups either. */
	if (write_file("/proc/self/uid_map", um, err) < 0 ||
	    write_file("/proc/self/setgroups", "deny", err) < 0 ||
	    write_file("/proc/self/gid_map", gm, err) < 0)
		return -1;
	return 0;
}

bool ns_probe_view(unsigned long flags, bool privileged, char *why, size_t n)
{
	struct cordon_clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.flags = flags;
	ca.exit_signal = SIGCHLD;
	pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		/* a detached proc of the new PID namespace, attached nowhere;
		 * the exit code says which step failed and its errno */
		int fs = fsopen("proc", FSOPEN_CLOEXEC);
		if (fs < 0)
			_exit(errno < 64 ? 64 + errno : 1);
		if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 || fsmount(fs, FSMOUNT_CLOEXEC, 0) < 0)
			_exit(errno < 64 ? 128 + errno : 1);
		_exit(0);
	}
	if (pid < 0) {
		hostwhy_userns(errno, privileged, why, n);
		return false;
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	if (code) {
		int e = code & 63;
		snprintf(why, n, "the run's /proc: a fresh proc cannot be mounted in its namespaces (%s from %s%s%s)",
			 e ? strerrorname_np(e) : "an error", code >= 128 ? "fsmount" : "fsopen",
			 e == EPERM ? ": the host's /proc has masked or covered paths, as a container's" : "",
			 e == ENOSYS ? ": refused by seccomp, as a container's profile" : "");
		return false;
	}
	if (privileged) {
		int t = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (t < 0) {
			int e = errno;
			snprintf(why, n, "the run's binds: as root cordon clones them (%s from open_tree%s)", strerrorname_np(e),
				 e == EPERM ? ": no CAP_SYS_ADMIN, as in a container's default capabilities, or a seccomp profile" : "");
			return false;
		}
		close(t);
	}
	return true;
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

int ns_synthetic_addrs(cordon_error *err)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cordon_err_errno(err, "socket for lo:1");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo:1");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(NS_SYNTH_V4)};
	memcpy(&ifr.ifr_addr, &a, sizeof(a));
	if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
		return cordon_err_errno(err, "address lo:1");
	struct sockaddr_in m = {.sin_family = AF_INET, .sin_addr.s_addr = 0xffffffffu};
	memcpy(&ifr.ifr_netmask, &m, sizeof(m));
	if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0)
		return cordon_err_errno(err, "netmask lo:1");
	_cleanup_close_ int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s6 < 0)
		return errno == EAFNOSUPPORT ? 0 : cordon_err_errno(err, "socket for lo's IPv6 address");
	struct in6_ifreq r6 = {.ifr6_prefixlen = 128, .ifr6_ifindex = (int)if_nametoindex("lo")};
	static const uint8_t v6[16] = {0xfd, 0x63, 0x6f, 0x72, 0x64, 0x6e, 0xff, 0xff, [15] = 1}; /* fd63:6f72:646e:ffff::1 */
	memcpy(&r6.ifr6_addr, v6, sizeof(v6));
	if (r6.ifr6_ifindex <= 0 || ioctl(s6, SIOCSIFADDR, &r6) < 0)
		return errno == EACCES || errno == EADDRNOTAVAIL ? 0 : cordon_err_errno(err, "IPv6 address on lo");
	return 0;
}

/* The map text: every id to itself, a and b to each other. */
static void swap_map(char *out, size_t sz, unsigned a, unsigned b)
{
	unsigned lo = a < b ? a : b, hi = a < b ? b : a;
	size_t n = 0;
	if (lo > 0)
		n += (size_t)snprintf(out + n, sz - n, "0 0 %u\n", lo);
	n += (size_t)snprintf(out + n, sz - n, "%u %u 1\n%u %u 1\n", a, b, b, a);
	if (hi - lo > 1)
		n += (size_t)snprintf(out + n, sz - n, "%u %u %u\n", lo + 1, lo + 1, hi - lo - 1);
	if (hi < 4294967294u)
		snprintf(out + n, sz - n, "%u %u %u\n", hi + 1, hi + 1, 4294967295u - hi - 1);
}

int ns_swap_userns(uid_t ua, uid_t ub, gid_t ga, gid_t gb, cordon_error *err)
{
	if (ua == ub || ga == gb)
		return cordon_err(err, EINVAL, "an idmapping that swaps an id with itself");
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return cordon_err_errno(err, "pipe");
	/* A child in a new user namespace that waits for the pipe to close:
	 * async-signal-safe only (the supervisor has threads). */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		char c;
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return cordon_err_errno(err, "clone(CLONE_NEWUSER) for the client's idmapping");
	}
	char um[200], gm[200], path[64];
	swap_map(um, sizeof(um), (unsigned)ua, (unsigned)ub);
	swap_map(gm, sizeof(gm), (unsigned)ga, (unsigned)gb);
	int fd = -1;
	if (write_maps(pid, um, gm, false, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cordon_err_errno(err, "open %s", path);
	}
	close(p[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return fd;
}
