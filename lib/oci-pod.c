/* A pod's containers in its sandbox's user namespace: the CRI annotations
 * (containerd's io.kubernetes.cri.*, CRI-O's io.kubernetes.cri-o.*) name the
 * container's type and its sandbox; the sandbox's state in the same root
 * gives its init, whose /proc/PID/ns/user the container joins, and its
 * /proc/PID/ns/net where the sandbox holds the pod's egress (oci-egress.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oci-pod.h"
#include "error.h"
#include "json.h"
#include "oci-state.h"

static const char *ann_in(const strv *k, const strv *v, const char *k1, const char *k2)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->v[i], k1) == 0 || (k2 && strcmp(k->v[i], k2) == 0))
			return v->v[i];
	return NULL;
}

static const char *ann(const struct oci_config *c, const char *k1, const char *k2)
{
	return ann_in(&c->ann_k, &c->ann_v, k1, k2);
}

#define TYPE_K "io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType"
#define SANDBOX_K "io.kubernetes.cri.sandbox-id", "io.kubernetes.cri-o.SandboxID"
#define POLICY_K "run.cordon.policy", NULL

bool oci_pod_is_sandbox(const struct oci_config *c)
{
	const char *type = ann(c, TYPE_K);
	return type && strcmp(type, "sandbox") == 0;
}

bool oci_pod_is_member(const struct oci_config *c)
{
	const char *type = ann(c, TYPE_K);
	return type && strcmp(type, "container") == 0 && ann(c, SANDBOX_K);
}

const char *oci_pod_sandbox_id(const struct oci_config *c)
{
	return ann(c, SANDBOX_K);
}

/* Does the policy text have a "network" section (the sandbox holds the
 * pod's egress, oci-egress.c)? Its create parsed it whole. */
static bool has_network(const char *text)
{
	cordon_error e;
	jnode *j = json_parse(text, strlen(text), &e);
	bool r = j && j->type == J_OBJ && json_get(j, "network");
	json_free(j);
	return r;
}

/* Are the namespace files a and b the same namespace? */
static bool same_ns(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* A pod's egress (oci-pod.h): c (a container of the pod whose sandbox's
 * state s is, alive) joins the sandbox's network namespace in place of the
 * pod's its config names: 1, 0 where the sandbox holds no egress. */
/* Does the sandbox (its state s) hold the pod's egress? */
static bool holds_egress(const struct oci_state *s)
{
	const char *theirs = ann_in(&s->ann_k, &s->ann_v, POLICY_K);
	const char *stype = ann_in(&s->ann_k, &s->ann_v, TYPE_K);
	return theirs && stype && strcmp(stype, "sandbox") == 0 && has_network(theirs);
}

static int join_egress(struct oci_config *c, const char *sb, const struct oci_state *s, cordon_error *err)
{
	const char *mine = ann(c, POLICY_K);
	const char *theirs = ann_in(&s->ann_k, &s->ann_v, POLICY_K);
	bool held = holds_egress(s);
	if (!held) {
		if (mine)
			return cordon_err(err, 0, "annotation run.cordon.policy: this container joins the pod's network "
						  "namespace %s, and its sandbox %s holds no egress policy (a pod's egress is "
						  "its sandbox's: put the annotation on the pod)", c->ns_path[OCI_NS_NET], sb);
		return 0;
	}
	if (mine && strcmp(mine, theirs) != 0)
		return cordon_err(err, 0, "annotation run.cordon.policy: differs from its sandbox %s's; a pod has one "
					  "egress policy, its sandbox's", sb);
	/* the pod's network namespace is the one the sandbox's supervisor
	 * makes the proxy's sockets in (CRI-O names it by its pinned path);
	 * containerd names the sandbox init's, already cordon's */
	char sup[64], path[64];
	snprintf(sup, sizeof(sup), "/proc/%d/ns/net", (int)s->sup);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)s->pid);
	if (!oci_proc_same(s->sup, s->sup_start))
		return cordon_err(err, ESRCH, "the pod's sandbox container %s: its supervisor, which runs the pod's egress "
					      "proxy, is gone", sb);
	if (!same_ns(c->ns_path[OCI_NS_NET], sup) && !same_ns(c->ns_path[OCI_NS_NET], path))
		return cordon_err(err, 0, "linux.namespaces: joins the network namespace %s, which is neither the pod's "
					  "nor its sandbox %s's (whose egress policy every container of the pod is held to)",
				  c->ns_path[OCI_NS_NET], sb);
	char *p = strdup(path);
	if (!p || (!mine && (strv_push(&c->ann_k, "run.cordon.policy") < 0 || strv_push(&c->ann_v, theirs) < 0))) {
		free(p);
		return cordon_oom(err);
	}
	free(c->ns_path[OCI_NS_NET]);
	c->ns_path[OCI_NS_NET] = p;
	return 1;
}

/* A file the sandbox's create wrote in its state directory dfd (root's,
 * 0600; oci_egress_pod_publish) read whole, NUL-terminated, into *out
 * (NULL where there is none); no link followed, at most 4 MiB. */
static int read_small(int dfd, const char *name, char **out, size_t *len, cordon_error *err)
{
	enum { MAX = 4 << 20 };
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : cordon_err_errno(err, "its %s", name);
	struct stat st;
	char *p = NULL;
	size_t n = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX) {
		close(fd);
		return cordon_err(err, EINVAL, "its %s: not a regular file of at most %d bytes", name, MAX);
	}
	if (!(p = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return cordon_oom(err);
	}
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, p + n, (size_t)st.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (n < (size_t)st.st_size) {
		free(p);
		return cordon_err(err, EIO, "its %s: short read", name);
	}
	p[n] = '\0';
	*out = p;
	if (len)
		*len = n;
	return 0;
}

/* Is the config already in the sandbox's pod: a namespace it joins by path
 * (net, ipc or uts, as containerd and CRI-O give a pod's containers) the
 * sandbox init's own? The annotations alone are the caller's word: without
 * this, any config naming a running container of the root as its
 * "sandbox" would get that container's user namespace (outside review 4,
 * F2). */
static bool in_pod(const struct oci_config *c, pid_t pid)
{
	static const struct {
		int k;
		const char *n;
	} ks[] = {{OCI_NS_NET, "net"}, {OCI_NS_IPC, "ipc"}, {OCI_NS_UTS, "uts"}};
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		if (!c->ns_path[ks[i].k])
			continue;
		char p[64];
		struct stat a, b;
		snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)pid, ks[i].n);
		if (stat(c->ns_path[ks[i].k], &a) == 0 && stat(p, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return true;
	}
	return false;
}

int oci_pod_join(struct oci_config *c, const char *root, struct oci_pod *pod, cordon_error *err)
{
	pod->pid = 0;
	pod->start = 0;
	const char *sb = ann(c, SANDBOX_K);
	bool user = !(c->ns_path[OCI_NS_USER] || c->ns_new[OCI_NS_USER] || c->nuidm || c->ngidm);
	bool net = c->ns_path[OCI_NS_NET] != NULL;
	bool policy = ann(c, POLICY_K) != NULL;
	/* the host's network (no namespace: a hostNetwork pod's), without a
	 * policy of its own: refused where the sandbox holds the pod's egress */
	bool hostnet = !net && !c->ns_new[OCI_NS_NET] && !policy;
	if (!oci_pod_is_member(c) || (!user && !net && !hostnet))
		return 0;
	if (!oci_id_valid(sb))
		return cordon_err(err, EINVAL, "annotation io.kubernetes.cri.sandbox-id \"%.64s\" is not a container id", sb);
	int dfd = -1;
	cordon_error e2;
	if (oci_state_open(root, sb, &dfd, &e2) < 0) {
		/* not this root's: the config's namespaces as they are */
		if (net && policy)
			return cordon_err(err, ESRCH, "annotation run.cordon.policy: this container joins the pod's network "
						      "namespace %s, and its sandbox %s is not a container of this runtime's "
						      "(gone, or another runtime's)", c->ns_path[OCI_NS_NET], sb);
		return 0;
	}
	struct oci_state s = {0};
	int r = oci_state_read(dfd, &s, err);
	enum oci_status st = r == 0 ? oci_state_status(dfd, &s) : OCI_STOPPED;
	if (r < 0) {
		close(dfd);
		oci_state_free(&s);
		return cordon_err_wrap(err, "the pod's sandbox container %s", sb);
	}
	pid_t pid = s.pid;
	uint64_t start = s.start_time;
	if (st != OCI_RUNNING && st != OCI_CREATED && st != OCI_PAUSED) {
		close(dfd);
		oci_state_free(&s);
		return cordon_err(err, ESRCH, "the pod's sandbox container %s (annotation io.kubernetes.cri.sandbox-id) is %s",
				  sb, oci_status_names[st]);
	}
	r = net ? join_egress(c, sb, &s, err) : 0;
	/* the sandbox's CA bundle and placeholders, where it published them */
	if (r > 0 && (read_small(dfd, OCI_POD_CA, &c->pod_ca, &c->pod_ca_len, err) < 0 ||
		      read_small(dfd, OCI_POD_SECRETS, &c->pod_secrets, NULL, err) < 0))
		r = cordon_err_wrap(err, "the pod's sandbox container %s", sb);
	close(dfd);
	if (hostnet && holds_egress(&s))
		r = cordon_err(err, 0, "linux.namespaces: this container has the host's network, and its sandbox %s holds "
				       "the pod's egress policy (annotation run.cordon.policy), which it would bypass: a "
				       "container of such a pod joins the pod's network namespace, or carries the "
				       "annotation itself", sb);
	oci_state_free(&s);
	if (r < 0)
		return -1;
	if (r > 0) {
		pod->pid = pid; /* its network namespace joined (oci_pod_recheck) */
		pod->start = start;
	}
	if (!user || !in_pod(c, pid))
		return 0; /* not in its pod: a user namespace of its own, as without the annotations */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	char *p = strdup(path);
	if (!p)
		return cordon_oom(err);
	c->ns_path[OCI_NS_USER] = p;
	pod->pid = pid;
	pod->start = start;
	return 0;
}

int oci_pod_recheck(const struct oci_pod *pod, cordon_error *err)
{
	if (pod->pid && !oci_proc_same(pod->pid, pod->start))
		return cordon_err(err, ESRCH, "the pod's sandbox container (pid %d) ended while this container joined it",
				  (int)pod->pid);
	return 0;
}
