/* Egress in OCI mode (oci-egress.h): the annotation run.cordon.policy read
 * with cordon's own policy parser (pol-parse.c), the network namespace the
 * proxy needs, the process's proxy variables (sup-env.c's, as cordon run
 * sets them) and init's listening socket; the secrets, the run's CA and
 * its bundle, made at create, and init's mount of the bundle and of the
 * secrets delivered as files. The
 * supervisor runs the proxy itself (sup-proxy.c) in its loop
 * (oci-supervisor.c). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "oci-egress.h"
#include "json.h"
#include "ns.h"
#include "oci-common.h"
#include "oci-pod.h"
#include "pol-opts.h"
#include "pol-parse.h"
#include "policy.h"
#include "proxy.h"
#include "pxhttp.h"
#include "tls.h"
#include "sup-env.h"
#include "ca-bundle.h"

#define WHERE "annotation " OCI_POLICY_ANNOTATION

static const char *annotation(const struct oci_config *c)
{
	const char *v = NULL;
	for (size_t i = 0; i < c->ann_k.n; i++)
		if (strcmp(c->ann_k.v[i], OCI_POLICY_ANNOTATION) == 0)
			v = c->ann_v.v[i];
	return v;
}

/* Only "network" and "secrets" apply here: the config itself says what the
 * policy's other sections would (its mounts, resources, seccomp, env), and a
 * key cordon-oci would ignore must not look enforced. A secret is injected
 * (the proxy puts its value in requests, the process holds a placeholder)
 * or delivered as a file ("mount", init's tmpfs: oci_egress_mount_secrets),
 * or both (the file holds the placeholder): a value the process should
 * hold as a variable is the config's env. */
static int check_sections(const char *text, cordon_error *err)
{
	jnode *root = json_parse(text, strlen(text), err);
	if (!root) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", err->msg);
		return cordon_err(err, 0, WHERE ":%s", m); /* "LINE:COL: what" */
	}
	int r = 0;
	for (size_t i = 0; root->type == J_OBJ && i < root->n && r == 0; i++)
		if (strcmp(root->keys[i], "network") != 0 && strcmp(root->keys[i], "secrets") != 0)
			r = cordon_err(err, 0, WHERE ":%d:%d: \"%s\" does not apply in OCI mode (the config decides it); "
					       "only \"network\" and \"secrets\" do", root->kline[i], root->kcol[i], root->keys[i]);
	jnode *net = root->type == J_OBJ ? json_get(root, "network") : NULL;
	for (size_t i = 0; net && net->type == J_OBJ && i < net->n && r == 0; i++)
		if (strcmp(net->keys[i], "transparent") == 0 || strcmp(net->keys[i], "resolve") == 0)
			r = cordon_err(err, 0, WHERE ":%d:%d: \"network.%s\" is not supported in OCI mode yet",
				       net->kline[i], net->kcol[i], net->keys[i]);
	jnode *sec = root->type == J_OBJ ? json_get(root, "secrets") : NULL;
	for (size_t i = 0; sec && sec->type == J_OBJ && i < sec->n && r == 0; i++) {
		const jnode *o = sec->items[i];
		if (o->type != J_OBJ)
			continue; /* cordon's parser says why */
		if (!json_get(o, "inject") && !json_get(o, "mount"))
			r = cordon_err(err, 0, WHERE ":%d:%d: secret \"%s\": only an injected secret (\"inject\") or a file "
					       "(\"mount\") applies in OCI mode; a value the process holds as a variable is the "
					       "config's process.env",
				       o->line, o->col, sec->keys[i]);
	}
	json_free(root);
	return r;
}

/* A secret's file: in a directory of its own (init's tmpfs over it hides
 * what the image has there), not the CA's, not at or below a bind of the
 * config's (a host path: the directory would be made there). */
static int check_mounts(const struct oci_config *c, const cordon_policy *p, cordon_error *err)
{
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		if (!s->mount)
			continue;
		const char *slash = strrchr(s->mount, '/');
		if (slash == s->mount)
			return cordon_err(err, 0, WHERE ": secret %s: mount %s must be in a directory (e.g. /run/secrets/%s)",
					  s->name, s->mount, s->name);
		size_t dl = (size_t)(slash - s->mount);
		if (strncmp(s->mount, CORDON_CA_DIR, dl) == 0 && CORDON_CA_DIR[dl] == '\0')
			return cordon_err(err, 0, WHERE ": secret %s: mount %s is in %s, the run's CA's; use a directory "
						 "of its own such as /run/secrets", s->name, s->mount, CORDON_CA_DIR);
		/* Each directory is a tmpfs of its own: one below another's
		 * would be hidden by it, or not be made in it (read-only). */
		for (size_t k = 0; k < i; k++) {
			const char *o = p->secrets[k].mount;
			if (!o)
				continue;
			size_t ol = (size_t)(strrchr(o, '/') - o);
			bool nested = (ol < dl && strncmp(s->mount, o, ol) == 0 && s->mount[ol] == '/') ||
				      (dl < ol && strncmp(o, s->mount, dl) == 0 && o[dl] == '/');
			if (strcmp(o, s->mount) == 0 || nested)
				return cordon_err(err, 0, WHERE ": secret %s: mount %s %s secret %s's %s; put secrets' files in one "
							 "directory or in directories side by side",
						  s->name, s->mount, nested ? "and" : "is also", p->secrets[k].name,
						  nested ? "are in nested directories (a tmpfs each)" : "file");
		}
		for (size_t k = 0; k < c->nmounts; k++) {
			const char *d = c->mounts[k].dest;
			size_t l = strlen(d);
			while (l > 1 && d[l - 1] == '/')
				l--;
			bool below = (l == 1 && d[0] == '/') ||
				     (strncmp(s->mount, d, l) == 0 && (s->mount[l] == '/' || s->mount[l] == '\0'));
			if (below && c->mounts[k].bind && dl >= l)
				return cordon_err(err, 0, WHERE ": secret %s: mount %s is inside %s, a bind of the config's (a "
							 "host path); use a directory of its own such as /run/secrets",
						  s->name, s->mount, d);
		}
	}
	return 0;
}

int oci_egress_load(struct oci_config *c, cordon_error *err)
{
	const char *text = annotation(c);
	if (!text)
		return 0;
	if (check_sections(text, err) < 0)
		return -1;
	cordon_policy *p = policy_new();
	if (!p)
		return cordon_oom(err);
	/* relative paths (none that "network" takes here) against the bundle */
	if (policy_load_json(p, text, strlen(text), WHERE, c->bundle, err) < 0) {
		policy_free(p);
		return -1;
	}
	if (!(p->sections & SEC_NETWORK)) {
		bool sec = p->nsecrets > 0;
		policy_free(p);
		return sec ? cordon_err(err, 0, WHERE ": its \"secrets\" need a \"network\" section (the container's "
						 "own network namespace; \"allow\": [] for no egress)") : 0;
	}
	/* cordon run's (pol-plan.c): the proxy's port inside is init's */
	for (size_t i = 0; p->net_allow.n && i < p->nloopback_ports; i++)
		if (p->loopback_ports[i] == PROXY_PORT) {
			policy_free(p);
			return cordon_err(err, 0, WHERE ": network.loopback_ports: %d is the egress proxy's port inside the "
						 "container", PROXY_PORT);
		}
	if (check_mounts(c, p, err) < 0) {
		policy_free(p);
		return -1;
	}
	/* A pod (oci-pod.h): its sandbox container holds the pod's egress, a
	 * network namespace of its own with the proxy, whose upstream sockets
	 * are made in the pod's (c->pod_net); its containers join the
	 * sandbox's (oci_pod_join made ns_path[OCI_NS_NET] that at create,
	 * and checked the sandbox has this policy). The proxy runs in the
	 * sandbox's supervisor alone, with the run's CA and the secrets'
	 * values; its containers get the CA's bundle and the placeholders
	 * the sandbox published (oci_egress_prepare). */
	bool sandbox = c->ns_path[OCI_NS_NET] && oci_pod_is_sandbox(c);
	bool member = c->ns_path[OCI_NS_NET] && oci_pod_is_member(c);
	if (member) {
		c->pod_proxy = true;
		c->egress = p;
		return 0;
	}
	if (sandbox) {
		c->pod_net = c->ns_path[OCI_NS_NET];
		c->ns_path[OCI_NS_NET] = NULL;
	} else if (c->ns_path[OCI_NS_NET]) {
		policy_free(p);
		return cordon_err(err, 0, WHERE ": its \"network\" section needs the container's own network namespace, "
					 "and linux.namespaces joins %s; cordon-oci refuses it (podman: --network none; in a "
					 "pod, the sandbox container's annotations io.kubernetes.cri.container-type "
					 "\"sandbox\" give the pod one)",
				  c->ns_path[OCI_NS_NET]);
	}
	/* The proxy is the only way out: in the caller's (the host's) network
	 * namespace the container would reach everything directly. */
	c->ns_new[OCI_NS_NET] = true;
	c->egress = p;
	return 0;
}

/* A variable's name is set by the config's env. */
static bool env_sets(const strv *env, const char *var)
{
	size_t l = strcspn(var, "=");
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], var, l) == 0 && env->v[i][l] == '=')
			return true;
	return false;
}

/* cordon run's (sup_env_cordon): none when nothing is allowed (no proxy
 * runs then, and the namespace has no way out at all); the CA variables
 * (CORDON_CA_FILE) where the proxy opens TLS (policy_intercepts). */
static int proxy_vars(const struct oci_config *c, strv *vars, cordon_error *err)
{
	if (!c->egress)
		return 0;
	return sup_env_cordon(c->egress, NULL, vars, err);
}

int oci_egress_env(struct oci_config *c, cordon_error *err)
{
	strv vars = {0};
	int r = proxy_vars(c, &vars, err);
	for (size_t i = 0; r == 0 && i < vars.n; i++)
		if (!env_sets(&c->env, vars.v[i]) && strv_push(&c->env, vars.v[i]) < 0)
			r = cordon_oom(err);
	strv_free(&vars);
	return r;
}

int oci_egress_env_added(const struct oci_config *c, strv *names, cordon_error *err)
{
	strv vars = {0};
	int r = proxy_vars(c, &vars, err);
	for (size_t i = 0; r == 0 && i < vars.n; i++)
		if (!env_sets(&c->env, vars.v[i]) && strv_push(names, vars.v[i]) < 0)
			r = cordon_oom(err);
	strv_free(&vars);
	/* the injected secrets' placeholders (oci_egress_prepare), which
	 * replace the config's own */
	const cordon_policy *p = c->egress;
	for (size_t i = 0; r == 0 && p && p->net_allow.n && policy_intercepts(p) && i < p->nsecrets; i++)
		if (p->secrets[i].inject && !p->secrets[i].mount && strv_push(names, p->secrets[i].name) < 0)
			r = cordon_oom(err);
	return r;
}

int oci_egress_listen(int *fd, cordon_error *err)
{
	if (ns_loopback_up(err) < 0)
		return cordon_err_wrap(err, "the egress proxy");
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PROXY_PORT),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1024) < 0) {
		cordon_err_errno(err, "the egress proxy's socket (127.0.0.1:%d)", PROXY_PORT);
		if (l >= 0)
			close(l);
		return -1;
	}
	*fd = l;
	return 0;
}

/* The run's CA: as cordon run's, for as long as a container may run (no
 * wall-clock limit here), from an hour ago. */
#define OCI_CA_VALID (397u * 86400u)

/* The config's variable NAME (every entry of it) gives way to the
 * placeholder's, as cordon run's secrets come last and win. */
static int put_placeholder(strv *env, const char *name, const char *placeholder)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < env->n;)
		if (strncmp(env->v[i], name, l) == 0 && env->v[i][l] == '=') {
			free(env->v[i]);
			memmove(&env->v[i], &env->v[i + 1], (env->n - i) * sizeof(env->v[0])); /* NULL too */
			env->n--;
		} else
			i++;
	buf b = {0};
	if (buf_printf(&b, "%s=%s", name, placeholder) < 0) {
		buf_free(&b);
		return -1;
	}
	return strv_push_take(env, b.p); /* freed if it fails */
}

/* The placeholder the pod's sandbox published for secret name (its
 * OCI_POD_SECRETS lines, c->pod_secrets), a copy; NULL (err) without. */
static char *pod_placeholder(const struct oci_config *c, const char *name, cordon_error *err)
{
	size_t nl = strlen(name);
	for (const char *l = c->pod_secrets; l && *l;) {
		if (strncmp(l, name, nl) == 0 && l[nl] == ' ') {
			char *ph = strndup(l + nl + 1, strcspn(l + nl + 1, "\n"));
			if (!ph)
				cordon_oom(err);
			return ph;
		}
		const char *nx = strchr(l, '\n');
		l = nx ? nx + 1 : "";
	}
	cordon_err(err, 0, WHERE ": secret %s: the pod's sandbox %s published no placeholder for it (created by an "
			      "older cordon-oci?)", name, oci_pod_sandbox_id(c));
	return NULL;
}

/* A container of a pod whose sandbox holds the egress (c->pod_proxy): the
 * proxy is the sandbox's, so are the placeholders (c->env) and the CA
 * bundle (no CA of its own). An injected secret's value is never read
 * here: only the sandbox's proxy holds it. The secrets delivered as files
 * are read as a container's own (their values from cordon-oci's
 * environment or files; an injected one's file holds the sandbox's
 * placeholder), through a copy of the policy's list holding them alone
 * (r->own, which their entries point into). */
static int pod_member(struct oci_config *c, struct oci_egress_run *r, bool tls, cordon_error *err)
{
	cordon_policy *p = c->egress;
	size_t nown = 0, ninj = 0;
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct cordon_secret *s = &p->secrets[i];
		nown += s->mount && !s->inject;
		ninj += s->mount && s->inject;
		if (s->mount || !s->inject)
			continue; /* a file; neither: oci_egress_load refused it */
		char *ph = pod_placeholder(c, s->name, err);
		if (!ph)
			return -1;
		int rc = put_placeholder(&c->env, s->name, ph);
		free(ph);
		if (rc < 0)
			return cordon_oom(err);
	}
	if (nown) {
		if (!(r->own = calloc(nown, sizeof(*r->own))))
			return cordon_oom(err);
		for (size_t i = 0; i < p->nsecrets; i++)
			if (p->secrets[i].mount && !p->secrets[i].inject)
				r->own[r->nown++] = p->secrets[i]; /* shallow: the policy's strings */
		extern char **environ;
		struct cordon_run_options o;
		policy_opts_init(&o);
		o.envp = environ;
		const struct cordon_run_options *was = p->opts;
		struct cordon_secret *all = p->secrets;
		size_t n = p->nsecrets;
		p->opts = &o;
		p->secrets = r->own;
		p->nsecrets = r->nown;
		int rc = secrets_load(p, &r->sec, err);
		p->opts = was;
		p->secrets = all;
		p->nsecrets = n;
		if (rc < 0)
			return cordon_err_wrap(err, WHERE);
	}
	/* an injected secret's file holds the sandbox's placeholder: no value */
	if (ninj) {
		struct secret_value *v = realloc(r->sec.v, (r->sec.n + ninj) * sizeof(*v));
		if (!v)
			return cordon_oom(err);
		r->sec.v = v;
		for (size_t i = 0; i < p->nsecrets; i++) {
			const struct cordon_secret *s = &p->secrets[i];
			if (!s->mount || !s->inject)
				continue;
			char *ph = pod_placeholder(c, s->name, err);
			if (!ph)
				return -1;
			r->sec.v[r->sec.n++] = (struct secret_value){.name = s->name, .mount = s->mount, .placeholder = ph, .pol = s};
		}
	}
	if (!tls)
		return 0;
	if (!c->pod_ca || !c->pod_ca_len)
		return cordon_err(err, 0, WHERE ": the pod's sandbox %s published no CA bundle (created by an older "
					 "cordon-oci?)", oci_pod_sandbox_id(c));
	return buf_append(&r->bundle, c->pod_ca, c->pod_ca_len) < 0 ? cordon_oom(err) : 0;
}

int oci_egress_pod_publish(int dirfd, const struct oci_config *c, cordon_error *err)
{
	const struct oci_egress_run *r = c->egress_run;
	if (!c->pod_net || !r)
		return 0;
	buf b = {0};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < r->sec.n; i++)
		if (r->sec.v[i].placeholder && buf_printf(&b, "%s %s\n", r->sec.v[i].name, r->sec.v[i].placeholder) < 0)
			rc = cordon_oom(err);
	if (rc == 0 && oci_write_at(dirfd, OCI_POD_SECRETS, b.p ? b.p : "", b.len, 0600) < 0)
		rc = cordon_err_errno(err, WHERE ": the pod's placeholders (%s)", OCI_POD_SECRETS);
	if (rc == 0 && r->bundle.len && oci_write_at(dirfd, OCI_POD_CA, r->bundle.p, r->bundle.len, 0600) < 0)
		rc = cordon_err_errno(err, WHERE ": the pod's CA bundle (%s)", OCI_POD_CA);
	buf_free(&b);
	return rc;
}

int oci_egress_prepare(struct oci_config *c, cordon_error *err)
{
	cordon_policy *p = c->egress;
	bool tls = p && p->net_allow.n && policy_intercepts(p);
	bool files = false; /* a secret delivered as a file (init writes it) */
	for (size_t i = 0; p && i < p->nsecrets; i++)
		files |= p->secrets[i].mount != NULL;
	if (!tls && !files)
		return 0;
	struct oci_egress_run *r = calloc(1, sizeof(*r));
	if (!r)
		return cordon_oom(err);
	c->egress_run = r;
	if (c->pod_proxy)
		return pod_member(c, r, tls, err);
	/* the values: cordon-oci's own environment (the caller's, at create)
	 * or the files the policy names */
	extern char **environ;
	struct cordon_run_options o;
	policy_opts_init(&o);
	o.envp = environ;
	const struct cordon_run_options *was = p->opts;
	p->opts = &o;
	int rc = secrets_load(p, &r->sec, err);
	p->opts = was;
	if (rc < 0)
		return cordon_err_wrap(err, WHERE);
	for (size_t i = 0; i < r->sec.n; i++)
		r->npsec += r->sec.v[i].placeholder != NULL;
	if (r->npsec && !(r->psec = calloc(r->npsec, sizeof(*r->psec))))
		return cordon_oom(err);
	for (size_t i = 0, k = 0; i < r->sec.n; i++) {
		const struct secret_value *v = &r->sec.v[i];
		if (!v->placeholder)
			continue;
		/* as cordon run's: a "mount" secret's file holds the placeholder */
		if (!v->mount && put_placeholder(&c->env, v->name, v->placeholder) < 0)
			return cordon_oom(err);
		r->psec[k++] = (struct pxhttp_secret){v->name, v->placeholder, v->value, v->len, &v->pol->inject_hosts,
						      v->pol->in_header, v->pol->in_query, v->pol->allow_plaintext, i};
	}
	if (!tls)
		return 0; /* the files alone: no proxy opens TLS */
	size_t pl;
	if (!(r->tls = tls_ops_get(err)) || r->tls->ca_new(&r->ca, OCI_CA_VALID, err) < 0)
		return cordon_err_wrap(err, WHERE ": the run's CA");
	const char *pem = r->tls->ca_pem(r->ca, &pl);
	return ca_bundle_build(&r->bundle, pem, pl, err);
}

void oci_egress_release(struct oci_config *c)
{
	struct oci_egress_run *r = c->egress_run;
	if (!r)
		return;
	secrets_free(&r->sec);
	if (r->ca)
		r->tls->ca_free(r->ca);
	buf_free(&r->bundle);
	free(r->psec);
	free(r->own);
	free(r);
	c->egress_run = NULL;
}

void oci_egress_drop_in_init(const struct oci_config *c)
{
	struct oci_egress_run *r = c->egress_run;
	if (!r)
		return;
	/* a file's value (not its placeholder) until init wrote it: then
	 * oci_egress_mount_secrets wipes it */
	for (size_t i = 0; i < r->sec.n; i++)
		if (r->sec.v[i].value && !(r->sec.v[i].mount && !r->sec.v[i].placeholder))
			explicit_bzero(r->sec.v[i].value, r->sec.v[i].len);
	if (r->ca)
		r->tls->ca_free(r->ca); /* OpenSSL clears the key's memory */
	r->ca = NULL;
}

/* A tmpfs of init's own (fsopen: never a host path), not attached yet:
 * its root has mode, nosuid, nodev, noexec. The mount's fd, or -1 (errno). */
static int detached_tmpfs(const char *mode)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	int m = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	int e = errno;
	close(fs);
	errno = e;
	return m;
}

int oci_egress_mount_ca(int dirfd, const struct oci_config *c, cordon_error *err)
{
	const struct oci_egress_run *r = c->egress_run;
	int m = detached_tmpfs("0755");
	if (m < 0)
		return cordon_err_errno(err, "the run's CA at %s: tmpfs", CORDON_CA_FILE);
	int f = openat(m, "ca.pem", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
	size_t off = 0;
	while (f >= 0 && off < r->bundle.len) {
		ssize_t n = write(f, r->bundle.p + off, r->bundle.len - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (f >= 0)
		close(f);
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (f < 0 || off < r->bundle.len ||
	    syscall(SYS_mount_setattr, m, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0 ||
	    syscall(SYS_move_mount, m, "", dirfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		cordon_err_errno(err, "the run's CA at %s", CORDON_CA_FILE);
		close(m);
		return -1;
	}
	close(m);
	return 0;
}

/* A read-only tmpfs of init's own (never a host path) with each secret of
 * directory dir (its path in the container, for messages) as a 0400 file
 * owned by the process's user, mounted on dirfd. */
static int mount_secret_dir(int dirfd, const struct oci_config *c, const char *dir, cordon_error *err)
{
	const struct oci_egress_run *r = c->egress_run;
	size_t dl = strlen(dir);
	int m = detached_tmpfs("0500");
	if (m < 0)
		return cordon_err_errno(err, WHERE ": secrets in %s: tmpfs", dir);
	if (fchownat(m, "", c->uid, c->gid, AT_EMPTY_PATH) < 0) {
		cordon_err_errno(err, WHERE ": secrets in %s: owned by %u:%u", dir, (unsigned)c->uid, (unsigned)c->gid);
		close(m);
		return -1;
	}
	for (size_t i = 0; i < r->sec.n; i++) {
		const struct secret_value *s = &r->sec.v[i];
		if (!s->mount || strncmp(s->mount, dir, dl) != 0 || s->mount[dl] != '/' || strchr(s->mount + dl + 1, '/'))
			continue;
		size_t len, off = 0;
		const uint8_t *val = secret_delivered(s, &len);
		int f = openat(m, s->mount + dl + 1, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0400);
		while (f >= 0 && off < len) {
			ssize_t n = write(f, val + off, len - off);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		int bad = f < 0 || off < len || fchown(f, c->uid, c->gid) < 0;
		if (f >= 0)
			close(f);
		if (bad) {
			cordon_err_errno(err, WHERE ": secret %s: the file %s", s->name, s->mount);
			close(m);
			return -1;
		}
	}
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (syscall(SYS_mount_setattr, m, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0 ||
	    syscall(SYS_move_mount, m, "", dirfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		cordon_err_errno(err, WHERE ": secrets in %s", dir);
		close(m);
		return -1;
	}
	close(m);
	return 0;
}

int oci_egress_mount_secrets(int rootfd, const struct oci_config *c,
			     int (*ensure_dir)(int rootfd, const char *path, cordon_error *err), cordon_error *err)
{
	const struct oci_egress_run *r = c->egress_run;
	int rc = 0;
	for (size_t i = 0; r && rc == 0 && i < r->sec.n; i++) {
		const char *sm = r->sec.v[i].mount;
		if (!sm)
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(sm, '/') - sm), sm); /* oci_egress_load: in a directory */
		bool done = false; /* an earlier secret's directory: mounted with it */
		for (size_t k = 0; k < i && !done; k++) {
			const char *o = r->sec.v[k].mount;
			done = o && strncmp(o, dir, strlen(dir)) == 0 && o[strlen(dir)] == '/' && !strchr(o + strlen(dir) + 1, '/');
		}
		if (done)
			continue;
		int d = ensure_dir(rootfd, dir, err);
		rc = d < 0 ? cordon_err_wrap(err, WHERE ": making %s in root.path for secret %s", dir, r->sec.v[i].name)
			   : mount_secret_dir(d, c, dir, err);
		if (d >= 0)
			close(d);
	}
	/* the values are the supervisor's alone again */
	for (size_t i = 0; r && i < r->sec.n; i++)
		if (r->sec.v[i].value)
			explicit_bzero(r->sec.v[i].value, r->sec.v[i].len);
	return rc;
}
