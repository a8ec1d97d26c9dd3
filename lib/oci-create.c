/* The create verb's client side (docs/oci.md): loads and checks the
 * bundle's config.json (the refusals: a host user namespace, a mount
 * namespace the host's user namespace owns, a map to the host's root),
 * makes the state directory, keeps the config's copy there and takes a
 * host id range (lib/oci-slots.c), then double-forks the
 * supervisor (oci-supervisor.c: its parent exits, so it is reparented to the
 * caller's subreaper or to init) and waits on the ready pipe for its word:
 * created, or the error that stopped it. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oci-create.h"
#include "error.h"
#include "oci-config.h"
#include "oci-state.h"
#include "oci-cgroup.h"
#include "oci-common.h"
#include "oci-slots.h"
#include "oci-egress.h"
#include "oci-inbound.h"
#include "oci-privguard.h"
#include "oci-supervisor.h"
#include "oci-nsjoin.h"
#include "oci-pod.h"

int oci_config_check(const struct oci_config *c, struct oci_nsjoin *j, cordon_error *err)
{
	struct stat st;
	if (lstat(c->root, &st) < 0)
		return cordon_err_errno(err, "root.path %s", c->root);
	if (S_ISLNK(st.st_mode))
		return cordon_err(err, 0, "root.path %s is a symbolic link (cordon-oci takes a directory only)", c->root);
	if (!S_ISDIR(st.st_mode))
		return cordon_err(err, 0, "root.path %s is not a directory", c->root);
	if (c->args.n == 0)
		return cordon_err(err, 0, "%s/config.json: no process to run", c->bundle);
	/* the user and mount namespaces joined by path (oci-nsjoin.h): never
	 * the host's root */
	struct oci_nsjoin own, *jn = j ? j : &own;
	if (oci_nsjoin_open(c, jn, err) < 0)
		return -1;
	if (!j)
		oci_nsjoin_close(jn);
	for (size_t i = 0; i < c->nuidm; i++)
		if (c->uidm[i].outer == 0)
			return cordon_err(err, 0, "linux.uidMappings maps container uid %u to the host's root; "
						      "cordon-oci refuses it", c->uidm[i].inner);
	for (size_t i = 0; i < c->ngidm; i++)
		if (c->gidm[i].outer == 0)
			return cordon_err(err, 0, "linux.gidMappings maps container gid %u to the host's root group; "
						      "cordon-oci refuses it", c->gidm[i].inner);
	for (int k = 0; k < OCI_NS_N; k++)
		if (c->ns_path[k]) {
			int fd = open(c->ns_path[k], O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				if (j)
					oci_nsjoin_close(j);
				return cordon_err_errno(err, "linux.namespaces %s path %s", oci_ns_names[k],
							c->ns_path[k]);
			}
			close(fd);
		}
	return 0;
}

/* A range of host ids of the container's own, where the config maps none
 * (lib/oci-slots.h): the state directory's path is its owner's name. */
static int take_slot(const struct oci_create_opts *o, const struct oci_config *c, struct oci_sup *x, cordon_error *err)
{
	/* a joined user namespace's maps are its own: no range for it, but
	 * the range those ids are (its container's) held while this one lives */
	if (x->join->user >= 0) {
		if (oci_slot_pin(x->join->uidm, x->join->nuidm, x->join->gidm, x->join->ngidm, &x->slotfd, err) < 0)
			return cordon_err_wrap(err, "linux.namespaces: the user namespace joined by path");
		return 0;
	}
	if (c->nuidm && c->ngidm)
		return 0;
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", o->root, o->id) >= sizeof(path))
		return cordon_err(err, ENAMETOOLONG, "%s/%s", o->root, o->id);
	return oci_slot_take(x->dirfd, path, &x->slot, &x->slotfd, err);
}

int oci_create(const struct oci_create_opts *o, pid_t *pidp, cordon_error *err)
{
	struct oci_config c;
	char bundle[PATH_MAX];
	if (!realpath(o->bundle ? o->bundle : ".", bundle))
		return cordon_err_errno(err, "--bundle %s", o->bundle ? o->bundle : ".");
	buf raw = {0};
	struct oci_nsjoin jn = {.user = -1, .mnt = -1};
	/* a pod's container joins its sandbox's user namespace (oci-pod.h),
	 * checked then as any joined by path, and its network namespace where
	 * the sandbox holds the pod's egress (before the egress policy) */
	/* the egress policy before the refusals: it may give the container a
	 * network namespace of its own, and adds the proxy's variables to its env */
	struct oci_pod pod = {0};
	if (oci_config_load_raw(bundle, &c, &raw, err) < 0 || oci_pod_join(&c, o->root, &pod, err) < 0 ||
	    oci_egress_load(&c, err) < 0 || oci_inbound_load(&c, err) < 0 || oci_config_check(&c, &jn, err) < 0 ||
	    oci_pod_recheck(&pod, err) < 0 || oci_nsjoin_maps(&jn, &c, err) < 0 ||
	    oci_egress_env(&c, err) < 0 || oci_egress_prepare(&c, err) < 0) {
		oci_nsjoin_close(&jn);
		buf_free(&raw);
		oci_egress_release(&c);
		oci_config_free(&c);
		return -1;
	}
	/* a rootfs others could reach: the image's privileged files are held
	 * read-only (oci-privguard.h); a read-only root needs nothing more */
	c.priv_guard = !c.readonly && oci_privguard_needed(c.root);
	struct oci_sup x = {.o = o, .c = &c, .slot = -1, .slotfd = -1, .join = &jn};
	if (oci_cgroup_path(&c, o->id, o->systemd_cgroup, x.cgpath, sizeof(x.cgpath), err) < 0 ||
	    oci_state_mkdir(o->root, o->id, &x.dirfd, err) < 0) {
		oci_nsjoin_close(&jn);
		buf_free(&raw);
		oci_egress_release(&c);
		oci_config_free(&c);
		return -1;
	}
	/* the config as parsed, kept: the later verbs read this copy (the
	 * bundle's may change after create); a new file, no link followed */
	int kept = oci_write_at(x.dirfd, "config.json", raw.p ? raw.p : "", raw.len, 0600);
	buf_free(&raw);
	if (kept < 0) {
		cordon_err_errno(err, "%s/%s/config.json", o->root, o->id);
		goto fail;
	}
	/* a pod's sandbox: what its containers need of its proxy */
	if (oci_egress_pod_publish(x.dirfd, &c, err) < 0)
		goto fail;
	int ready[2] = {-1, -1};
	if (take_slot(o, &c, &x, err) < 0)
		goto fail;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		cordon_err_errno(err, "pipe");
		goto fail;
	}
	x.ready = ready[1];
	pid_t xp = fork();
	if (xp < 0) {
		cordon_err_errno(err, "fork");
		goto fail;
	}
	if (xp == 0) {
		close(ready[0]);
		/* the supervisor holds none of the caller's descriptors (a pipe it
		 * inherited would stay open until the container exits); init gets
		 * stdio and --preserve-fds alone; the range's lock stays held
		 * by the supervisor while it lives */
		int keep[] = {x.ready, x.dirfd, x.slotfd, jn.user, jn.mnt};
		oci_close_fds_except(3 + o->preserve_fds, keep, 5);
		setsid();
		pid_t self = getpid();
		pid_t sp = fork();
		if (sp == 0)
			oci_supervisor(&x, self);
		_exit(sp < 0 ? 1 : 0);
	}
	close(ready[1]);
	/* the values and the CA's key are the supervisor's now */
	oci_egress_release(&c);
	waitpid(xp, NULL, 0);
	char m[OCI_MSG_MAX];
	ssize_t n;
	do
		n = read(ready[0], m, sizeof(m) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n > 0 && m[0] == 'O') {
		struct oci_state st;
		if (oci_state_read(x.dirfd, &st, err) < 0)
			goto fail;
		*pidp = st.pid;
		oci_state_free(&st);
		if (x.slotfd >= 0)
			close(x.slotfd); /* the supervisor's copy holds the lock */
		close(x.dirfd);
		oci_nsjoin_close(&jn);
		oci_config_free(&c);
		return 0;
	}
	m[n > 0 ? n : 0] = '\0';
	cordon_err(err, 0, "%s", n > 1 ? m + 1 : "the supervisor exited while creating the container");
fail:
	oci_egress_release(&c);
	/* our hold of the range first: release frees only a range no one
	 * holds (a supervisor that failed and has not exited yet still does:
	 * then the range is stale, and the next create takes it back) */
	if (x.slotfd >= 0)
		close(x.slotfd);
	if (x.slot >= 0)
		oci_slot_release(x.dirfd, x.slot);
	close(x.dirfd);
	oci_nsjoin_close(&jn);
	cordon_error e2;
	oci_state_remove(o->root, o->id, &e2);
	oci_config_free(&c);
	return -1;
}
