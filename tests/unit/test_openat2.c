/* openat2's emulation where a filter refuses the call (lib/openat2.c):
 * each case opened by the kernel's openat2 and by the walk, the same file
 * or the same error from both. */
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "compat.h"
#include "openat2.h"

#define STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

static char top[4096];
static int dfd = -1;

static int setup(void **st)
{
	(void)st;
	snprintf(top, sizeof(top), "%s/cordon-o2-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top))
		return -1;
	char p[4200];
	snprintf(p, sizeof(p), "%s/d", top), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/d/e", top), mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/d/f", top), close(open(p, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "%s/d/ln", top), (void)!symlink("f", p);
	snprintf(p, sizeof(p), "%s/d/dl", top), (void)!symlink("e", p);
	snprintf(p, sizeof(p), "%s/d/abs", top), (void)!symlink("/etc", p);
	snprintf(p, sizeof(p), "%s/d/fifo", top), mkfifo(p, 0644);
	dfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -1 : 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	close(dfd);
	return system(cmd) == 0 ? 0 : -1;
}

/* What one open gave: the file (device and inode) or the error. */
struct got {
	int err;
	dev_t dev;
	ino_t ino;
};

static struct got took(int fd)
{
	struct got g = {0, 0, 0};
	struct stat st;
	if (fd < 0) {
		g.err = errno;
		return g;
	}
	if (fstat(fd, &st) == 0) {
		g.dev = st.st_dev;
		g.ino = st.st_ino;
	}
	close(fd);
	return g;
}

/* Both ways; the kernel's is the reference. */
static void same(int at, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags | O_CLOEXEC, .resolve = resolve};
	struct got k = took((int)syscall(SYS_openat2, at, path, &how, sizeof(how)));
	struct got w = took(openat2_walk(at, path, &how));
	if (k.err != w.err || k.dev != w.dev || k.ino != w.ino)
		fail_msg("%s (flags %#llx resolve %#llx): the kernel %s (%d), the walk %s (%d)", path,
			 (unsigned long long)flags, (unsigned long long)resolve, k.err ? strerror(k.err) : "a file",
			 (int)k.ino, w.err ? strerror(w.err) : "a file", (int)w.ino);
}

static void test_as_the_kernel(void **st)
{
	(void)st;
	same(dfd, "d", O_PATH | O_DIRECTORY, STRICT);
	same(dfd, "d/e", O_RDONLY | O_DIRECTORY, STRICT);
	same(dfd, "d/e/", O_PATH, STRICT);
	same(dfd, "d//f", O_RDONLY, STRICT);
	same(dfd, "./d/./f", O_RDONLY, STRICT);
	same(dfd, ".", O_PATH, STRICT);
	same(dfd, "d/f/", O_RDONLY, STRICT);       /* ENOTDIR */
	same(dfd, "d/f/x", O_RDONLY, STRICT);      /* ENOTDIR */
	same(dfd, "d/nothing", O_RDONLY, STRICT);  /* ENOENT */
	same(dfd, "d/ln", O_RDONLY, STRICT);       /* ELOOP: a link to a file */
	same(dfd, "d/ln", O_PATH, STRICT);         /* ELOOP still */
	same(dfd, "d/ln", O_PATH | O_NOFOLLOW, STRICT); /* the link itself */
	same(dfd, "d/dl/x", O_RDONLY, STRICT);     /* ELOOP: a link on the way */
	same(dfd, "d/abs/passwd", O_RDONLY, STRICT);
	same(dfd, "/etc/passwd", O_RDONLY, STRICT); /* EXDEV: absolute, beneath */
	same(dfd, "..", O_PATH, STRICT);           /* EXDEV: out */
	same(dfd, "d/../..", O_PATH, STRICT);
	same(dfd, "d/fifo", O_RDONLY | O_NONBLOCK, STRICT);
	same(dfd, "d/dl", O_RDONLY | O_DIRECTORY, STRICT);  /* ELOOP: it would be followed */
	same(dfd, "d/dl", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, STRICT); /* ENOTDIR: the link itself */
	same(dfd, "d/ln/", O_PATH, STRICT);                 /* ELOOP: a slash follows it */
	same(dfd, "d/ln/", O_PATH | O_NOFOLLOW, STRICT);
	same(dfd, "d/e/new/", O_WRONLY | O_CREAT, STRICT);  /* EISDIR, nothing made */
	same(dfd, "d/e/./", O_WRONLY | O_CREAT, STRICT);
	same(dfd, "d/ln/", O_WRONLY | O_CREAT, STRICT);
	same(dfd, "d/fifo/", O_RDONLY | O_NONBLOCK, STRICT);
	same(dfd, "d/e/..", O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV); /* up, not beneath */
	same(dfd, "", O_PATH, STRICT);             /* ENOENT */
	char made[4200];
	snprintf(made, sizeof(made), "%s/d/e/new", top);
	assert_int_equal(access(made, F_OK), -1);
	same(AT_FDCWD, top, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	same(AT_FDCWD, "/proc/self/cwd", O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	/* A mount crossed: / to /proc. */
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	same(root, "proc", O_PATH, STRICT);
	same(root, "proc/self", O_PATH, STRICT);
	same(root, "proc", O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	close(root);
}

static void test_create_and_refusals(void **st)
{
	(void)st;
	struct open_how how = {.flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, .mode = 0600, .resolve = STRICT};
	int fd = openat2_walk(dfd, "d/e/new", &how);
	assert_true(fd >= 0);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	close(fd);
	/* a dangling link as the file to create: refused, nothing made */
	char p[4200];
	snprintf(p, sizeof(p), "%s/d/e/dangling", top);
	assert_int_equal(symlink("../made-by-link", p), 0);
	how.flags = O_WRONLY | O_CREAT | O_CLOEXEC;
	assert_int_equal(openat2_walk(dfd, "d/e/dangling", &how), -1);
	assert_int_equal(errno, ELOOP);
	snprintf(p, sizeof(p), "%s/d/made-by-link", top);
	assert_int_equal(access(p, F_OK), -1);
	/* what is not emulated stays ENOSYS: links allowed, or in-root */
	how = (struct open_how){.flags = O_RDONLY, .resolve = RESOLVE_BENEATH};
	assert_int_equal(openat2_walk(dfd, "d/f", &how), -1);
	assert_int_equal(errno, ENOSYS);
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS;
	assert_int_equal(openat2_walk(dfd, "d/f", &how), -1);
	assert_int_equal(errno, ENOSYS);
}

/* The last component a mount point (a file bound over d/e/m, a FIFO over
 * d/e/p): the kernel refuses the crossing before it opens anything; the
 * walk must too, not open (truncate, block on) the other mount's file and
 * then say EXDEV. In a mount namespace of a child's own; skipped where
 * none can be had (not root). */
static int mounted_last(void)
{
	char m[4200], p[4200], out[4200], fifo[4200];
	snprintf(m, sizeof(m), "%s/d/e/m", top);
	snprintf(p, sizeof(p), "%s/d/e/p", top);
	snprintf(out, sizeof(out), "%s/outside", top);
	snprintf(fifo, sizeof(fifo), "%s/outside-fifo", top);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	int fd = open(out, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "kept", 4) != 4 || close(fd) < 0)
		return 2;
	close(open(m, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	if (mkfifo(fifo, 0644) < 0 || mount(out, m, NULL, MS_BIND, NULL) < 0 || mount(fifo, p, NULL, MS_BIND, NULL) < 0)
		return 77;
	alarm(20); /* a walk that blocks on the FIFO fails the test, not hangs it */
	int at = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC); /* dfd is of the mounts before */
	struct open_how how = {.flags = O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, .resolve = STRICT};
	if (syscall(SYS_openat2, at, "d/e/m", &how, sizeof(how)) != -1 || errno != EXDEV)
		return 3; /* the kernel's own answer */
	if (openat2_walk(at, "d/e/m", &how) != -1 || errno != EXDEV)
		return 4;
	struct stat sb;
	if (stat(out, &sb) < 0 || sb.st_size != 4)
		return 5; /* truncated before it was refused */
	how.flags = O_RDONLY | O_CLOEXEC;
	if (openat2_walk(at, "d/e/p", &how) != -1 || errno != EXDEV)
		return 6;
	return 0;
}

static void test_mount_point_last_not_opened(void **st)
{
	(void)st;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(mounted_last());
	int ws = 0;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 77)
		skip();
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		fail_msg("the walk with a mount point last: %s %d (3: the kernel's answer, 4: not EXDEV, 5: the "
			 "other mount's file truncated, 6: the FIFO there, SIGALRM: blocked on it)",
			 WIFEXITED(ws) ? "step" : "signal", WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_the_kernel),
		cmocka_unit_test(test_create_and_refusals),
		cmocka_unit_test(test_mount_point_last_not_opened),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
