#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cleanup.h"
#include "compat.h"
#include "error.h"
#include "landlock.h"
#include "hostwhy.h"
#include "policy.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x

int landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi > 0 ? (int)abi : 0;
}

const char *const *landlock_missing(int abi)
{
	static const struct { int abi; const char *what; } all[] = {
		{1, "filesystem rules (ABI 1): only the mount view confines files"},
		{2, "refer (ABI 2): renames and links across directories"},
		{3, "truncate (ABI 3)"},
		{4, "tcp (ABI 4): no port rules; the run's own network namespace (loopback and the proxy only) still confines it"},
		{5, "ioctl on devices (ABI 5)"},
		{6, "scope (ABI 6): abstract unix sockets and signals; the run's own IPC and PID namespaces still confine them"},
	};
	static const char *out[ARRAY_SIZE(all) + 1];
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (abi < all[i].abi)
			out[n++] = all[i].what;
	out[n] = NULL;
	return out;
}

/* Every filesystem right the kernel's ABI knows. */
static uint64_t fs_mask(int abi)
{
	uint64_t m = FS(EXECUTE) | FS(WRITE_FILE) | FS(READ_FILE) | FS(READ_DIR) | FS(REMOVE_DIR) |
		     FS(REMOVE_FILE) | FS(MAKE_CHAR) | FS(MAKE_DIR) | FS(MAKE_REG) | FS(MAKE_SOCK) |
		     FS(MAKE_FIFO) | FS(MAKE_BLOCK) | FS(MAKE_SYM);
	if (abi >= 2)
		m |= FS(REFER);
	if (abi >= 3)
		m |= FS(TRUNCATE);
	if (abi >= 5)
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return m;
}

/* One more path rule (masked to the plan's ABI). */
int landlock_add_path(struct landlock_plan *lp, const char *path, uint64_t access, cordon_error *err)
{
	struct landlock_rule *r = realloc(lp->rules, (lp->n + 1) * sizeof(*r));
	if (!r)
		return cordon_oom(err);
	lp->rules = r;
	lp->rules[lp->n].path = strdup(path);
	if (!lp->rules[lp->n].path)
		return cordon_oom(err);
	lp->rules[lp->n].access = access & lp->fs;
	lp->rules[lp->n].optional = false;
	lp->n++;
	return 0;
}

/* LANDLOCK_HOST_VIEW: an entry's rights on the host's path of the same
 * name, or 0 where the view would have put something else there. */
static uint64_t host_view_access(const struct model_entry *e)
{
	switch (e->kind) {
	case MK_RO_BIND:
	case MK_RW_BIND:
		return !e->host || strcmp(e->host, e->path) == 0 ? e->landlock : 0;
	case MK_DEVICE:
		return FS(READ_FILE) | FS(WRITE_FILE) | LANDLOCK_ACCESS_FS_IOCTL_DEV;
	case MK_PROC:
		return FS(READ_FILE) | FS(READ_DIR);
	default:
		return 0;
	}
}

int landlock_prepare_run(const cordon_policy *p, const struct boundary_model *m, unsigned conds, int proxy_port,
			 struct landlock_plan *out, cordon_error *err)
{
	int abi = landlock_abi();
	if (!abi && !(p->allow_weaker & WEAK_LANDLOCK)) {
		int e = errno;
		char why[256];
		hostwhy_landlock(e, why, sizeof(why));
		memset(out, 0, sizeof(*out));
		return cordon_err(err, 0, "%s: the second filesystem layer is missing; set enforcement.allow_weaker [\"landlock\"] to run without it", why);
	}
	if (landlock_prepare(m, conds, abi, p->loopback_ports, p->nloopback_ports, out, err) < 0)
		return -1;
	/* The degraded boundary (no network namespace): no TCP bind or
	 * connect of the run's at all, not even to the proxy's port (on the
	 * host's loopback that port is anyone's): a connect to the proxy is
	 * made by the supervisor and handed in (sup-degrade-net.h). */
	if ((conds & LANDLOCK_HOST_VIEW) && abi >= 4) {
		out->net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
		free(out->tcp_ports);
		out->tcp_ports = NULL;
		out->nports = 0;
		return 0;
	}
	if (p->net_allow.n)
		out->connect_port = (uint16_t)proxy_port;
	return 0;
}

int landlock_prepare(const struct boundary_model *m, unsigned conds, int abi, const uint16_t *ports, size_t nports,
		     struct landlock_plan *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	out->abi = abi;
	if (!abi)
		return 0;
	out->fs = fs_mask(abi);
	/* TCP (ABI 4+) only when the policy names its loopback ports: a port rule
	 * cannot tell the run's own loopback from the host's, and the network
	 * namespace already keeps the host out of reach (only lo, no route), so
	 * by default the run may bind and connect to any port of its own
	 * loopback (test servers on port 0). Declared ports make Landlock hold
	 * the run to exactly those, whatever namespace a socket belongs to. */
	if (abi >= 4 && nports) {
		out->net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
		{
			out->tcp_ports = calloc(nports, sizeof(uint16_t));
			if (!out->tcp_ports)
				return cordon_oom(err);
			memcpy(out->tcp_ports, ports, nports * sizeof(uint16_t));
			out->nports = nports;
		}
	}
	if (abi >= 6)
		out->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	/* Every path of the model in effect, with the access it names. */
	for (size_t i = 0; i < m->n; i++) {
		const struct model_entry *e = &m->e[i];
		uint64_t access = e->landlock;
		if (conds & LANDLOCK_HOST_VIEW)
			access = host_view_access(e);
		if (!model_entry_active(e, conds) || !access)
			continue;
		if (landlock_add_path(out, e->path, access, err) < 0)
			return -1;
		out->rules[out->n - 1].optional = (e->flags & MODEL_OPTIONAL) != 0;
	}
	return 0;
}

void landlock_plan_free(struct landlock_plan *lp)
{
	for (size_t i = 0; i < lp->n; i++)
		free(lp->rules[i].path);
	free(lp->rules);
	free(lp->tcp_ports);
	memset(lp, 0, sizeof(*lp));
}

int landlock_apply(const struct landlock_plan *lp, cordon_error *err)
{
	if (!lp->abi)
		return 0;
	struct cordon_landlock_ruleset_attr attr = {lp->fs, lp->net, lp->scoped};
	size_t size = lp->abi >= 6 ? sizeof(attr) : lp->abi >= 4 ? 2 * sizeof(__u64) : sizeof(__u64);
	_cleanup_close_ int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return cordon_err_errno(err, "landlock_create_ruleset (ABI %d)", lp->abi);
	for (size_t i = 0; i < lp->n; i++) {
		_cleanup_close_ int fd = open(lp->rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && lp->rules[i].optional)
			continue;
		if (fd < 0)
			return cordon_err_errno(err, "landlock: open %s", lp->rules[i].path);
		/* Directory-only rights cannot be granted on a file: the kernel
		 * refuses them there (EINVAL), and only then is the file looked
		 * at and the rule given its file rights alone (a syscall saved
		 * per directory, the common case). */
		const uint64_t file_rights = FS(EXECUTE) | FS(WRITE_FILE) | FS(READ_FILE) | FS(TRUNCATE) |
					     LANDLOCK_ACCESS_FS_IOCTL_DEV;
		struct landlock_path_beneath_attr pb = {.allowed_access = lp->rules[i].access, .parent_fd = fd};
		int r = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
		struct stat st;
		if (r < 0 && errno == EINVAL && (pb.allowed_access & ~file_rights) && fstat(fd, &st) == 0 &&
		    !S_ISDIR(st.st_mode)) {
			pb.allowed_access &= file_rights;
			r = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
		}
		if (r < 0)
			return cordon_err_errno(err, "landlock: rule for %s", lp->rules[i].path);
	}
	for (size_t i = 0; i < lp->nports; i++) {
		struct cordon_landlock_net_port_attr np = {lp->net, lp->tcp_ports[i]};
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
			return cordon_err_errno(err, "landlock: rule for TCP port %u", lp->tcp_ports[i]);
	}
	if (lp->connect_port && lp->net) {
		struct cordon_landlock_net_port_attr np = {LANDLOCK_ACCESS_NET_CONNECT_TCP, lp->connect_port};
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
			return cordon_err_errno(err, "landlock: rule for the proxy port %u", lp->connect_port);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return cordon_err_errno(err, "landlock_restrict_self");
	return 0;
}
