/* Egress in OCI mode (oci-egress.h): the annotation run.cordon.policy read
 * with cordon's own policy parser (pol-parse.c), the network namespace the
 * proxy needs, the process's proxy variables (sup-env.c's, as cordon run
 * sets them) and init's listening socket. The supervisor runs the proxy
 * itself (sup-proxy.c) in its loop (oci-supervisor.c). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "oci-egress.h"
#include "json.h"
#include "ns.h"
#include "pol-parse.h"
#include "policy.h"
#include "proxy.h"
#include "sup-env.h"

#define WHERE "annotation " OCI_POLICY_ANNOTATION

static const char *annotation(const struct oci_config *c)
{
	const char *v = NULL;
	for (size_t i = 0; i < c->ann_k.n; i++)
		if (strcmp(c->ann_k.v[i], OCI_POLICY_ANNOTATION) == 0)
			v = c->ann_v.v[i];
	return v;
}

/* Only "network" applies here: the config itself says what the policy's
 * other sections would (its mounts, resources, seccomp, env), and a key
 * cordon-oci would ignore must not look enforced. */
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
		if (strcmp(root->keys[i], "network") != 0)
			r = cordon_err(err, 0, WHERE ":%d:%d: \"%s\" does not apply in OCI mode (the config decides it); "
					       "only \"network\" does", root->kline[i], root->kcol[i], root->keys[i]);
	jnode *net = root->type == J_OBJ ? json_get(root, "network") : NULL;
	static const char *const later[] = {"loopback_ports", "upstream_ca"};
	for (size_t i = 0; net && net->type == J_OBJ && i < net->n && r == 0; i++)
		for (size_t k = 0; k < sizeof(later) / sizeof(later[0]) && r == 0; k++)
			if (strcmp(net->keys[i], later[k]) == 0)
				r = cordon_err(err, 0, WHERE ":%d:%d: \"network.%s\" is not supported in OCI mode yet",
					       net->kline[i], net->kcol[i], later[k]);
	json_free(root);
	return r;
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
		policy_free(p);
		return 0;
	}
	if (c->ns_path[OCI_NS_NET]) {
		policy_free(p);
		return cordon_err(err, 0, WHERE ": its \"network\" section needs the container's own network namespace, "
					 "and linux.namespaces joins %s; cordon-oci refuses it (podman: --network none)",
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
 * runs then, and the namespace has no way out at all). Of the policy only
 * its hosts: the proxy opens no TLS here, so no CA variable is set. */
static int proxy_vars(const struct oci_config *c, strv *vars, cordon_error *err)
{
	if (!c->egress)
		return 0;
	cordon_policy hosts = {.net_allow = c->egress->net_allow};
	return sup_env_cordon(&hosts, NULL, vars, err);
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
