/* The user and mount namespaces a config joins by path, opened once and
 * checked by descriptor (oci-nsjoin.h; docs/oci.md, "Namespaces joined by
 * path"). */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "oci-nsjoin.h"
#include "error.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* path's namespace, open, of type want ("user", "mount" in the errors). */
static int open_ns(const char *path, int want, const char *name, cordon_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cordon_err_errno(err, "linux.namespaces %s path %s", name, path);
	int t = ioctl(fd, NS_GET_NSTYPE);
	if (t != want) {
		close(fd);
		return cordon_err(err, 0, "linux.namespaces: %s path %s is not a %s namespace", name, path, name);
	}
	return fd;
}

/* The user namespace fd lies strictly below the caller's: its chain of
 * parents meets the caller's (NS_GET_PARENT fails with EPERM past the
 * caller's own, so the caller's namespace and its ancestors never do). */
static int check_below(int fd, const char *path, cordon_error *err)
{
	struct stat self, st;
	if (stat("/proc/self/ns/user", &self) < 0 || fstat(fd, &st) < 0)
		return cordon_err_errno(err, "linux.namespaces user path %s", path);
	if (same_file(&self, &st))
		return cordon_err(err, 0, "linux.namespaces: user path %s is the host's user namespace: the "
					  "container would be host root", path);
	int cur = dup(fd);
	for (;;) {
		int par = cur < 0 ? -1 : ioctl(cur, NS_GET_PARENT);
		int e = errno;
		if (cur >= 0)
			close(cur);
		if (par < 0) {
			if (e == EPERM)
				return cordon_err(err, 0, "linux.namespaces: user path %s is not below the host's user "
							  "namespace (an ancestor of it, or outside it): the container "
							  "would hold the host's privileges", path);
			return cordon_err(err, e, "linux.namespaces user path %s: its parent", path);
		}
		bool top = fstat(par, &st) == 0 && same_file(&self, &st);
		if (top) {
			close(par);
			return 0;
		}
		cur = par;
	}
}

/* The namespace's owner (who made it, NS_GET_OWNER_UID) is the caller's
 * euid: the owner has every capability in it, so one made by another user
 * would hand that user the container's root (and, through its idmapped
 * trees, what the container's root may write). */
static int check_owner(int fd, const char *path, cordon_error *err)
{
	uid_t owner;
	if (ioctl(fd, NS_GET_OWNER_UID, &owner) < 0)
		return cordon_err_errno(err, "linux.namespaces user path %s: its owner", path);
	if (owner != geteuid())
		return cordon_err(err, 0, "linux.namespaces: user path %s was made by uid %u, not by cordon-oci's "
					  "(%u): its owner would hold the container's root", path, (unsigned)owner,
				  (unsigned)geteuid());
	return 0;
}

static int parse_map(const char *text, struct oci_idmap *m, size_t *n)
{
	*n = 0;
	for (const char *s = text; *s;) {
		unsigned a, b, c;
		if (sscanf(s, " %u %u %u", &a, &b, &c) != 3 || *n == OCI_NSJOIN_MAPS)
			return -1;
		m[(*n)++] = (struct oci_idmap){a, b, c};
		const char *nl = strchr(s, '\n');
		if (!nl)
			break;
		s = nl + 1;
	}
	return 0;
}

/* The maps of the user namespace fd, outside ids as the host's: read by
 * the host (this process) from /proc/PID of a child that joined it (a
 * reader outside a namespace sees its own ids in the second field). */
static int read_maps(int fd, const char *path, struct oci_nsjoin *j, cordon_error *err)
{
	int go[2], rel[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return cordon_err_errno(err, "pipe");
	if (pipe2(rel, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return cordon_err_errno(err, "pipe");
	}
	pid_t p = fork();
	if (p == 0) {
		close(go[0]);
		close(rel[1]);
		/* not dumpable before it joins: in there it holds every
		 * capability of the namespace, and the namespace's root (who has
		 * CAP_SYS_PTRACE there) must not reach this host-root process, its
		 * memory or its /proc/PID/root (the supervisor's helper does the
		 * same; outside review of cordon-oci 2) */
		int e = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setns(fd, CLONE_NEWUSER) < 0 ? errno : 0;
		if (write(go[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		char b;
		while (read(rel[0], &b, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(go[1]);
	close(rel[0]);
	int e = p < 0 ? errno : EIO;
	if (p > 0 && read(go[0], &e, sizeof(e)) != sizeof(e))
		e = EIO;
	close(go[0]);
	int r = 0;
	if (e)
		r = cordon_err(err, e, "linux.namespaces user path %s: joining it to read its mappings", path);
	for (int g = 0; r == 0 && g < 2; g++) {
		char f[64], text[16384];
		snprintf(f, sizeof(f), "/proc/%d/%s", (int)p, g ? "gid_map" : "uid_map");
		int mf = open(f, O_RDONLY | O_CLOEXEC);
		ssize_t n = mf < 0 ? -1 : read(mf, text, sizeof(text) - 1);
		if (mf >= 0)
			close(mf);
		if (n < 0) {
			r = cordon_err_errno(err, "linux.namespaces user path %s: reading its %s mappings", path,
					     g ? "gid" : "uid");
			break;
		}
		text[n] = '\0';
		if (parse_map(text, g ? j->gidm : j->uidm, g ? &j->ngidm : &j->nuidm) < 0)
			r = cordon_err(err, 0, "linux.namespaces user path %s: its %s mappings cannot be read", path,
				       g ? "gid" : "uid");
	}
	close(rel[1]);
	if (p > 0)
		waitpid(p, NULL, 0);
	return r;
}

/* No id of the namespace is the host's 0, and it has maps (empty ones could
 * still be written, mapping the host's root). */
static int check_maps(const struct oci_nsjoin *j, const char *path, cordon_error *err)
{
	for (int g = 0; g < 2; g++) {
		const struct oci_idmap *m = g ? j->gidm : j->uidm;
		size_t n = g ? j->ngidm : j->nuidm;
		const char *what = g ? "gid" : "uid";
		if (n == 0)
			return cordon_err(err, 0, "linux.namespaces: user path %s has no %s mapping yet (one written "
						  "later could map the host's root)", path, what);
		for (size_t i = 0; i < n; i++)
			if (m[i].outer == 0 && m[i].size > 0)
				return cordon_err(err, 0, "linux.namespaces: user path %s maps %s %u to the host's "
							  "%s 0: the container would be host root", path, what,
						  m[i].inner, what);
	}
	return 0;
}

/* The mount namespace fd: its owner is the joined user namespace. */
static int check_mnt(int fd, const struct oci_config *c, int user, cordon_error *err)
{
	const char *path = c->ns_path[OCI_NS_MNT];
	int u = ioctl(fd, NS_GET_USERNS);
	struct stat su = {0}, sh = {0}, sj = {0};
	bool host = u < 0 ? errno == EPERM /* above the caller's */
			  : fstat(u, &su) == 0 && stat("/proc/self/ns/user", &sh) == 0 && same_file(&su, &sh);
	if (host) {
		if (u >= 0)
			close(u);
		return cordon_err(err, 0, "linux.namespaces: joining the mount namespace %s, which the host's user "
					  "namespace owns, would run the container as the host's root; cordon-oci "
					  "refuses it", path);
	}
	if (u < 0)
		return cordon_err_errno(err, "linux.namespaces mount path %s: its owner", path);
	bool owned = user >= 0 && fstat(user, &sj) == 0 && same_file(&su, &sj);
	close(u);
	if (user < 0)
		return cordon_err(err, 0, "linux.namespaces: joining the mount namespace %s needs the user "
					  "namespace that owns it joined by path too (a new one cannot own it)", path);
	if (!owned)
		return cordon_err(err, 0, "linux.namespaces: the mount namespace %s is not owned by the user "
					  "namespace joined (%s)", path, c->ns_path[OCI_NS_USER]);
	return 0;
}

int oci_nsjoin_open(const struct oci_config *c, struct oci_nsjoin *j, cordon_error *err)
{
	j->user = j->mnt = -1;
	j->nuidm = j->ngidm = 0;
	const char *up = c->ns_path[OCI_NS_USER], *mp = c->ns_path[OCI_NS_MNT];
	if (up) {
		if ((j->user = open_ns(up, CLONE_NEWUSER, "user", err)) < 0)
			return -1;
		if (check_below(j->user, up, err) < 0 || check_owner(j->user, up, err) < 0 ||
		    read_maps(j->user, up, j, err) < 0 ||
		    check_maps(j, up, err) < 0)
			goto fail;
		if (c->nuidm || c->ngidm) {
			cordon_err(err, 0, "linux.%s with the user namespace %s joined by path: its mappings are "
					   "that namespace's (the spec: mappings only with a new one)",
				   c->nuidm ? "uidMappings" : "gidMappings", up);
			goto fail;
		}
	}
	if (mp) {
		if ((j->mnt = open_ns(mp, CLONE_NEWNS, "mount", err)) < 0 || check_mnt(j->mnt, c, j->user, err) < 0)
			goto fail;
	}
	return 0;
fail:
	oci_nsjoin_close(j);
	return -1;
}

void oci_nsjoin_close(struct oci_nsjoin *j)
{
	if (j->user >= 0)
		close(j->user);
	if (j->mnt >= 0)
		close(j->mnt);
	j->user = j->mnt = -1;
}

int oci_nsjoin_maps(const struct oci_nsjoin *j, struct oci_config *c, cordon_error *err)
{
	if (j->user < 0)
		return 0;
	struct oci_idmap *u = malloc((j->nuidm + 1) * sizeof(*u)), *g = malloc((j->ngidm + 1) * sizeof(*g));
	if (!u || !g) {
		free(u);
		free(g);
		return cordon_oom(err);
	}
	memcpy(u, j->uidm, j->nuidm * sizeof(*u));
	memcpy(g, j->gidm, j->ngidm * sizeof(*g));
	free(c->uidm);
	free(c->gidm);
	c->uidm = u, c->nuidm = j->nuidm;
	c->gidm = g, c->ngidm = j->ngidm;
	return 0;
}
