/* Static probe: one hostile (or merely demanding) action per sub-command.
 * Prints "ok ..." when the action succeeded and "denied <errno name>" when it
 * was refused, so a test can tell a boundary that held from one that failed. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/keyctl.h>
#include <linux/capability.h>
#include <sys/xattr.h>

static int result(int r, const char *what)
{
	if (r < 0) {
		printf("denied %s %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?", what);
		return 1;
	}
	printf("ok %s\n", what);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hostile ACTION [ARG]\n");
		return 2;
	}
	const char *a = argv[1], *arg = argc > 2 ? argv[2] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	/* privwrite FILE: every way root inside would change a file it owns
	 * but must not (the image's setuid file, outside review of cordon-oci,
	 * 1): open it for writing and write through a shared mapping; link it
	 * to /tmp; rename it. One line each. */
	if (!strcmp(a, "privwrite")) {
		int fd = open(arg, O_RDWR);
		if (!result(fd, "open-rw")) {
			char *m = mmap(NULL, 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (!result(m == MAP_FAILED ? -1 : 0, "mmap-write") && m != MAP_FAILED) {
				m[0] ^= 1;
				msync(m, 1, MS_SYNC);
				munmap(m, 1);
			}
			close(fd);
		}
		char l[64];
		snprintf(l, sizeof(l), "/tmp/l%d", getpid());
		result(link(arg, l), "link");
		unlink(l);
		char to[4096];
		snprintf(to, sizeof(to), "%s.moved", arg);
		if (!result(rename(arg, to), "rename"))
			rename(to, arg);
		return 0;
	}
	if (!strcmp(a, "read")) {
		int fd = open(arg, O_RDONLY);
		if (fd >= 0) {
			char b[64];
			ssize_t n = read(fd, b, sizeof(b));
			close(fd);
			return result(n < 0 ? -1 : 0, arg);
		}
		return result(-1, arg);
	}
	if (!strcmp(a, "write")) {
		int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			ssize_t n = write(fd, "x\n", 2);
			close(fd);
			return result(n < 0 ? -1 : 0, arg);
		}
		return result(-1, arg);
	}
	if (!strcmp(a, "ls"))
		return result(access(arg, F_OK), arg);
	if (!strcmp(a, "mount"))
		return result(mount("none", "/tmp", "tmpfs", 0, NULL), "mount");
	if (!strcmp(a, "mount-wait")) { /* a denial at once, then up to 60 s of waiting */
		int r = mount("none", "/tmp", "tmpfs", 0, NULL);
		for (int i = 0; i < 600; i++)
			usleep(100000);
		return result(r, "mount, and survived");
	}
	if (!strcmp(a, "unshare-user"))
		return result(unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)");
	if (!strcmp(a, "clone-ns")) { /* raw clone asking for a new user namespace */
		long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		return result(r < 0 ? -1 : 0, "clone(CLONE_NEWUSER)");
	}
	if (!strcmp(a, "clone3-ns")) {
		struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls; } ca = {0};
		ca.flags = CLONE_NEWUSER;
		ca.exit_signal = SIGCHLD;
		long r = syscall(SYS_clone3, &ca, sizeof(ca));
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		return result(r < 0 ? -1 : 0, "clone3(CLONE_NEWUSER)");
	}
	if (!strcmp(a, "setns"))
		return result((int)syscall(SYS_setns, 0, 0), "setns");
	if (!strcmp(a, "bpf")) {
		union bpf_attr at;
		memset(&at, 0, sizeof(at));
		at.map_type = BPF_MAP_TYPE_ARRAY;
		at.key_size = 4;
		at.value_size = 4;
		at.max_entries = 1;
		return result((int)syscall(SYS_bpf, BPF_MAP_CREATE, &at, sizeof(at)), "bpf");
	}
	if (!strcmp(a, "keyctl"))
		return result((int)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0), "keyctl");
	if (!strcmp(a, "add_key"))
		return result((int)syscall(SYS_add_key, "user", "k", "v", 1, KEY_SPEC_PROCESS_KEYRING), "add_key");
	if (!strcmp(a, "io_uring")) {
		struct io_uring_params p;
		memset(&p, 0, sizeof(p));
		return result((int)syscall(SYS_io_uring_setup, 4, &p), "io_uring_setup");
	}
	if (!strcmp(a, "userfaultfd"))
		return result((int)syscall(SYS_userfaultfd, 0), "userfaultfd");
	if (!strcmp(a, "perf")) {
		struct perf_event_attr pe;
		memset(&pe, 0, sizeof(pe));
		pe.type = PERF_TYPE_SOFTWARE;
		pe.size = sizeof(pe);
		pe.config = PERF_COUNT_SW_CPU_CLOCK;
		return result((int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0), "perf_event_open");
	}
	if (!strcmp(a, "tiocsti")) {
		char c = 'x';
		return result(ioctl(0, TIOCSTI, &c), "ioctl(TIOCSTI)");
	}
	if (!strcmp(a, "open_by_handle_at")) {
		struct { unsigned int bytes; int type; unsigned char h[16]; } fh = {16, 1, {0}};
		return result((int)syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), "open_by_handle_at");
	}
	if (!strcmp(a, "personality"))
		return result((int)syscall(SYS_personality, 0x0040000 /* ADDR_NO_RANDOMIZE */), "personality");
	if (!strcmp(a, "packet"))
		return result(socket(17 /* AF_PACKET */, SOCK_RAW, 0), "socket(AF_PACKET)");
	if (!strcmp(a, "i386")) { /* the i386 ABI through int 0x80: getpid */
		long r;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
		printf("i386 getpid returned %ld\n", r);
		return 0;
	}
	if (!strcmp(a, "x32")) { /* the x32 ABI: getpid with __X32_SYSCALL_BIT */
		long r = syscall(0x40000000 | 39);
		printf("x32 getpid returned %ld\n", r);
		return 0;
	}
	if (!strcmp(a, "rename")) /* rename ARG to ARG.moved */ {
		char to[4096];
		snprintf(to, sizeof(to), "%s.moved", arg);
		return result(rename(arg, to), "rename");
	}
	if (!strcmp(a, "exec")) {
		char *av[] = {(char *)arg, NULL};
		execv(arg, av);
		return result(-1, arg);
	}
	if (!strcmp(a, "abstract")) { /* connect to the abstract unix socket @ARG */
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un su = {.sun_family = AF_UNIX};
		size_t l = strlen(arg);
		memcpy(su.sun_path + 1, arg, l);
		return result(connect(s, (struct sockaddr *)&su, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l)),
			      "connect(abstract)");
	}
	if (!strcmp(a, "threads")) { /* a threaded program: clone without namespaces */
		pid_t p = fork();
		if (p == 0)
			_exit(7);
		int st;
		waitpid(p, &st, 0);
		return result(WEXITSTATUS(st) == 7 ? 0 : -1, "fork");
	}
	if (!strcmp(a, "kill"))
		return result(kill(atoi(arg), SIGKILL), "kill");
	if (!strcmp(a, "ptrace"))
		return result((int)ptrace(PTRACE_ATTACH, atoi(arg), 0, 0), "ptrace");
	if (!strcmp(a, "connect")) { /* connect 127.0.0.1 PORT */
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3]))};
		inet_pton(AF_INET, arg, &sa.sin_addr);
		return result(connect(s, (struct sockaddr *)&sa, sizeof(sa)), "connect");
	}
	if (!strcmp(a, "forkbomb")) {
		for (;;) {
			pid_t p = fork();
			if (p == 0) {
				pause();
				_exit(0);
			}
			if (p < 0) {
				/* keep trying: a real bomb does not give up */
				usleep(1000);
			}
		}
	}
	if (!strcmp(a, "splicepage")) {
		/* A page of 'A's put in stdout (a pipe) by reference, from a
		 * file: once the supervisor has taken it off the pipe, the file
		 * becomes 'B's; then "rewritten" in the file named by argv[2]. */
		static char page[65536];
		memset(page, 'A', sizeof(page));
		int fd = open("/tmp/splicepage", O_RDWR | O_CREAT | O_TRUNC, 0600);
		loff_t off = 0;
		if (fd < 0 || pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
		    splice(fd, &off, 1, NULL, sizeof(page), 0) != (ssize_t)sizeof(page))
			return result(-1, "splice");
		int queued = 1;
		while (ioctl(1, FIONREAD, &queued) == 0 && queued > 0)
			usleep(1000);
		memset(page, 'B', sizeof(page));
		if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page))
			return result(-1, "rewrite");
		close(fd);
		if (argc > 2)
			close(open(argv[2], O_WRONLY | O_CREAT, 0644));
		return 0;
	}
	if (!strcmp(a, "membomb")) {
		size_t chunk = 16 << 20;
		for (;;) {
			char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return result(-1, "mmap");
			memset(p, 1, chunk);
		}
	}
	if (!strcmp(a, "spin"))
		for (volatile unsigned long i = 0;; i++)
			;
	if (!strcmp(a, "sleep")) {
		sleep((unsigned)atoi(arg));
		return 0;
	}
	if (!strcmp(a, "daemon")) { /* double fork, the grandchild outlives us */
		pid_t p = fork();
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				/* touch a file every 100 ms: if it survives the run, the test sees it */
				for (int i = 0; i < 600; i++) {
					int fd = open(arg, O_WRONLY | O_CREAT | O_APPEND, 0644);
					if (fd >= 0) {
						if (write(fd, "x", 1) < 0) { /* ignore */ }
						close(fd);
					}
					usleep(100000);
				}
				_exit(0);
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		printf("ok daemonized\n");
		return 0;
	}
	if (!strcmp(a, "bigfile")) { /* write past the file size limit */
		int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char b[65536];
		memset(b, 'a', sizeof(b));
		for (int i = 0; i < 1024; i++)
			if (write(fd, b, sizeof(b)) < 0)
				return result(-1, "write");
		return 0;
	}
	if (!strcmp(a, "flood")) { /* unbounded output */
		char b[65536];
		memset(b, 'y', sizeof(b));
		for (;;)
			if (write(1, b, sizeof(b)) < 0)
				return 1;
	}
	if (!strcmp(a, "zombies")) { /* orphaned children that nobody waits for */
		for (int i = 0; i < 20; i++)
			if (fork() == 0)
				_exit(0);
		printf("ok zombies\n");
		return 0;
	}
	if (!strcmp(a, "exit"))
		return atoi(arg);
	if (!strcmp(a, "signal"))
		raise(atoi(arg));
	if (!strcmp(a, "fds")) { /* list open descriptors */
		for (int fd = 0; fd < 1024; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				printf("fd %d\n", fd);
		return 0;
	}
	/* A file capability (cap_net_raw+ep) on ARG, each way a process can
	 * write one: v2 (20 bytes) with setxattr and lsetxattr, v3 (24 bytes,
	 * root uid 0) with fsetxattr, v2 with setxattrat (463, by number: older
	 * headers lack it); then user.* attributes of 20 and of 5 bytes. */
	if (!strcmp(a, "setfcap")) {
		struct vfs_cap_data v2;
		struct vfs_ns_cap_data v3;
		memset(&v2, 0, sizeof(v2));
		memset(&v3, 0, sizeof(v3));
		v2.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
		v2.data[0].permitted = 1u << CAP_NET_RAW;
		v3.magic_etc = VFS_CAP_REVISION_3 | VFS_CAP_FLAGS_EFFECTIVE;
		v3.data[0].permitted = 1u << CAP_NET_RAW;
		int bad = 0;
		bad |= !result(setxattr(arg, "security.capability", &v2, sizeof(v2), 0), "setxattr(security.capability, 20)");
		bad |= !result(lsetxattr(arg, "security.capability", &v2, sizeof(v2), 0), "lsetxattr(security.capability, 20)");
		int fd = open(arg, O_RDONLY);
		bad |= !result(fd < 0 ? -1 : fsetxattr(fd, "security.capability", &v3, sizeof(v3), 0),
			       "fsetxattr(security.capability, 24)");
		struct { uint64_t value; uint32_t size, flags; } xa = {(uintptr_t)&v2, sizeof(v2), 0};
		bad |= !result((int)syscall(463, AT_FDCWD, arg, 0, "security.capability", &xa, sizeof(xa)),
			       "setxattrat(security.capability, 20)");
		result(setxattr(arg, "user.twenty", &v2, sizeof(v2), 0), "setxattr(user.twenty, 20)");
		result(setxattr(arg, "user.five", "12345", 5, 0), "setxattr(user.five, 5)");
		if (fd >= 0)
			close(fd);
		return bad;
	}
	/* Issue 27 item 7: a raw call by number (AT_FDCWD, then zeroes), for
	 * calls libc and libseccomp do not name. */
	/* denied-loop N: mount(2) N times in a row (denied by every cordon
	 * filter); "denied-loop K of N refused EPERM" counts the refusals. */
	if (!strcmp(a, "denied-loop")) {
		long n = atol(arg), k = 0;
		for (long i = 0; i < n; i++)
			if (syscall(SYS_mount, 0, 0, 0, 0, 0) < 0 && errno == EPERM)
				k++;
		printf("denied-loop %ld of %ld refused EPERM\n", k, n);
		return 0;
	}
	if (!strcmp(a, "syscall")) {
		char what[32];
		snprintf(what, sizeof(what), "syscall %ld", atol(arg));
		return result((int)syscall(atol(arg), AT_FDCWD, 0, 0, 0, 0, 0), what);
	}
	fprintf(stderr, "hostile: unknown action %s\n", a);
	return 2;
}
