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
#include <unistd.h>

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
	if (!strcmp(a, "unshare-user"))
		return result(unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)");
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
	fprintf(stderr, "hostile: unknown action %s\n", a);
	return 2;
}
