/* A pod's containers in its sandbox's user namespace: the CRI annotations
 * (containerd's io.kubernetes.cri.*, CRI-O's io.kubernetes.cri-o.*) name the
 * container's type and its sandbox; the sandbox's state in the same root
 * gives its init, whose /proc/PID/ns/user the container joins. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "oci-pod.h"
#include "error.h"
#include "oci-state.h"

static const char *ann(const struct oci_config *c, const char *k1, const char *k2)
{
	for (size_t i = 0; i < c->ann_k.n; i++)
		if (strcmp(c->ann_k.v[i], k1) == 0 || strcmp(c->ann_k.v[i], k2) == 0)
			return c->ann_v.v[i];
	return NULL;
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
	const char *type = ann(c, "io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType");
	const char *sb = ann(c, "io.kubernetes.cri.sandbox-id", "io.kubernetes.cri-o.SandboxID");
	if (!type || strcmp(type, "container") != 0 || !sb || c->ns_path[OCI_NS_USER] || c->ns_new[OCI_NS_USER] ||
	    c->nuidm || c->ngidm)
		return 0;
	if (!oci_id_valid(sb))
		return cordon_err(err, EINVAL, "annotation io.kubernetes.cri.sandbox-id \"%.64s\" is not a container id", sb);
	int dfd = -1;
	cordon_error e2;
	if (oci_state_open(root, sb, &dfd, &e2) < 0)
		return 0; /* not this root's: the config's namespaces as they are */
	struct oci_state s = {0};
	int r = oci_state_read(dfd, &s, err);
	enum oci_status st = r == 0 ? oci_state_status(dfd, &s) : OCI_STOPPED;
	close(dfd);
	if (r < 0) {
		oci_state_free(&s);
		return cordon_err_wrap(err, "the pod's sandbox container %s", sb);
	}
	pid_t pid = s.pid;
	uint64_t start = s.start_time;
	oci_state_free(&s);
	if (st != OCI_RUNNING && st != OCI_CREATED && st != OCI_PAUSED)
		return cordon_err(err, ESRCH, "the pod's sandbox container %s (annotation io.kubernetes.cri.sandbox-id) is %s",
				  sb, oci_status_names[st]);
	if (!in_pod(c, pid))
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
