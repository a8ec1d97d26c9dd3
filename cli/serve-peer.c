/* The client's own rights, for the host paths its policy names. The server
 * (often root) mounts and reads these paths; without this a client could
 * grant itself /root or read /etc/shadow as a secret. Each path is checked
 * by a forked helper that has taken the client's uid, gid and groups
 * (faccessat as that user, no capabilities); see serve-peer.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "error.h"
#include "pol-parse.h"
#include "serve-peer.h"
#include "strv.h"

#define MAX_CHECKS 256
#define MAX_GROUPS 256

struct pcheck {
	const char *what, *path;
	int mode; /* R_OK, W_OK */
};

struct plist {
	struct pcheck c[MAX_CHECKS];
	size_t n;
};

static int add(struct plist *l, const char *what, const char *path, int mode)
{
	if (l->n >= MAX_CHECKS)
		return -1;
	l->c[l->n++] = (struct pcheck){what, path, mode};
	return 0;
}

/* Every host path the client's policy names, with the access it implies.
 * The server's own defaults (the workspace, the system view) are not the
 * client's. */
static int collect(const cordon_policy *p, struct plist *l)
{
	int r = 0;
	for (size_t i = 0; i < p->nmounts; i++)
		if (p->mounts[i].src == SRC_POLICY && p->mounts[i].mode != MOUNT_TMPFS)
			r |= add(l, p->mounts[i].mode == MOUNT_RW ? "filesystem.write" : "filesystem.read",
				 p->mounts[i].path, p->mounts[i].mode == MOUNT_RW ? R_OK | W_OK : R_OK);
	for (size_t i = 0; i < p->nsecrets; i++)
		if (p->secrets[i].from_file)
			r |= add(l, "secrets (file)", p->secrets[i].from_file, R_OK);
	for (size_t i = 0; i < p->inputs.n; i++)
		r |= add(l, "inputs", p->inputs.v[i], R_OK);
	for (size_t i = 0; i < p->devices.n; i++)
		r |= add(l, "filesystem.devices", p->devices.v[i], R_OK | W_OK);
	if (p->upstream_ca)
		r |= add(l, "network.upstream_ca", p->upstream_ca, R_OK);
	if (p->check_files)
		r |= add(l, "check.files", p->check_files, R_OK);
	/* The image the run sees as its system (and its workspace's lower
	 * layer): the client's to read and search, else a root server would
	 * show it a directory such as /root's below. */
	if (p->root)
		r |= add(l, "root", p->root, R_OK | X_OK);
	return r;
}

/* In the helper, as the client: a writable path that does not exist must be
 * one the client could create (its nearest existing parent writable). */
static int may_access(const char *path, int mode)
{
	char tmp[4096];
	if (faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0)
		return 0;
	if (errno == ENOENT && !(mode & W_OK))
		return 0; /* nothing there to read */
	if (errno != ENOENT || strlen(path) >= sizeof(tmp))
		return errno;
	strcpy(tmp, path);
	for (;;) {
		char *s = strrchr(tmp, '/');
		if (!s)
			return ENOENT;
		if (s == tmp)
			s[1] = '\0';
		else
			*s = '\0';
		if (faccessat(AT_FDCWD, tmp, W_OK | X_OK, AT_EACCESS) == 0)
			return 0;
		if (errno != ENOENT || s == tmp)
			return errno;
	}
}

/* The helper: no allocation, no locks (the server has threads). Returns
 * the index of the first refused check and its errno over the pipe. */
static void helper(int wfd, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups, const struct plist *l)
{
	int res[2] = {-1, 0};
	if (syscall(SYS_setgroups, ngroups, groups) < 0 || syscall(SYS_setresgid, gid, gid, gid) < 0 ||
	    syscall(SYS_setresuid, uid, uid, uid) < 0) {
		res[1] = errno;
		res[0] = -2;
	}
	for (size_t i = 0; res[0] == -1 && i < l->n; i++) {
		int e = may_access(l->c[i].path, l->c[i].mode);
		if (e) {
			res[0] = (int)i;
			res[1] = e;
		}
	}
	if (write(wfd, res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

static int check_paths(uid_t uid, const struct plist *l, char *why, size_t whysz)
{
	gid_t gid = 65534, groups[MAX_GROUPS];
	int ngroups = 0;
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp) {
		gid = pw.pw_gid;
		ngroups = MAX_GROUPS;
		if (getgrouplist(pw.pw_name, gid, groups, &ngroups) < 0)
			ngroups = 0;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return snprintf(why, whysz, "checking the policy's paths: %s", strerror(errno)), -1;
	pid_t pid = fork();
	if (pid == 0)
		helper(p[1], uid, gid, groups, (size_t)ngroups, l);
	close(p[1]);
	int res[2] = {-2, EIO};
	ssize_t n = pid > 0 ? read(p[0], res, sizeof(res)) : -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (n != sizeof(res) || res[0] == -2) {
		snprintf(why, whysz, "could not check the policy's paths as uid %u: %s", (unsigned)uid,
			 strerror(n == sizeof(res) ? res[1] : EIO));
		return -1;
	}
	if (res[0] >= 0 && (size_t)res[0] < l->n) {
		const struct pcheck *c = &l->c[res[0]];
		snprintf(why, whysz, "%s: %s: uid %u may not %s it (%s); a client grants only what it could reach itself",
			 c->what, c->path, (unsigned)uid, c->mode & W_OK ? "write" : "read", strerror(res[1]));
		return -1;
	}
	return 0;
}

/* A secret from the server's environment: only one the ceiling names, from
 * the same variable. */
static bool ceiling_names(const cordon_policy *ceiling, const struct cordon_secret *s)
{
	for (size_t i = 0; ceiling && i < ceiling->nsecrets; i++)
		if (strcmp(ceiling->secrets[i].name, s->name) == 0 && ceiling->secrets[i].from_env &&
		    strcmp(ceiling->secrets[i].from_env, s->from_env) == 0)
			return true;
	return false;
}

int peer_policy_check(const char *ptext, const char *base_dir, uid_t uid, const cordon_policy *ceiling,
		      char *why, size_t whysz)
{
	/* The server's own uid has these rights already (and its environment:
	 * /proc/PID/environ). */
	if (uid == geteuid())
		return 0;
	cordon_policy *p = policy_new();
	cordon_error e = {0};
	if (!p || policy_load_json(p, ptext, strlen(ptext), "policy", base_dir, &e) < 0) {
		policy_free(p);
		return 0;
	}
	int r = 0;
	for (size_t i = 0; i < p->nsecrets && r == 0; i++)
		if (p->secrets[i].from_env && !ceiling_names(ceiling, &p->secrets[i])) {
			snprintf(why, whysz,
				 "secrets.%s: a secret from the server's environment ($%s) is given to a client only when the ceiling names it",
				 p->secrets[i].name, p->secrets[i].from_env);
			r = -1;
		}
	struct plist *lp = r == 0 ? calloc(1, sizeof(*lp)) : NULL;
	if (r == 0 && !lp) {
		snprintf(why, whysz, "out of memory");
		r = -1;
	}
	if (r == 0 && collect(p, lp) < 0) {
		snprintf(why, whysz, "the policy names more than %d host paths", MAX_CHECKS);
		r = -1;
	}
	/* Only root can take the client's uid; a server of another uid gives
	 * its clients its own rights (--allow-uid says so, docs/api.md). */
	if (r == 0 && lp->n && geteuid() == 0)
		r = check_paths(uid, lp, why, whysz);
	free(lp);
	policy_free(p);
	return r;
}

static gid_t primary_gid(uid_t uid)
{
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp)
		return pw.pw_gid;
	return 65534;
}

bool peer_run_as_client(uid_t uid, gid_t *gid)
{
	if (geteuid() != 0 || uid == 0 || uid == geteuid() || uid == (uid_t)-1)
		return false;
	*gid = primary_gid(uid);
	return true;
}

bool peer_policy_writes_host(const char *ptext)
{
	if (!ptext)
		return false;
	cordon_policy *p = policy_new();
	cordon_error e = {0};
	/* One that does not parse never starts a session: counted as writing. */
	if (!p || policy_load_json(p, ptext, strlen(ptext), "policy", "/", &e) < 0) {
		policy_free(p);
		return true;
	}
	bool w = false;
	for (size_t i = 0; i < p->nmounts; i++)
		w |= p->mounts[i].src == SRC_POLICY && p->mounts[i].mode == MOUNT_RW;
	policy_free(p);
	return w;
}

bool peer_ceiling_writes(const cordon_policy *c, const char *path)
{
	if (!c || !(c->sections & SEC_FILESYSTEM))
		return true;
	for (size_t i = 0; i < c->nmounts; i++) {
		char pre[PATH_MAX];
		if (c->mounts[i].mode == MOUNT_RW &&
		    (realpath(c->mounts[i].path, pre) ? path_has_prefix(path, pre) : path_has_prefix(path, c->mounts[i].path)))
			return true;
	}
	return false;
}
