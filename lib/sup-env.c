/* The command's environment, built by the supervisor from the policy and
 * the caller's options: nothing of cordon's own environment leaks in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cleanup.h"
#include "error.h"
#include "hash.h"
#include "proxy.h"
#include "sup-env.h"

struct env_probe {
	const strv *env;
	const char *name;
	size_t len; /* of the name, '=' included */
};

static bool env_name_eq(const void *ctx, uint32_t item)
{
	const struct env_probe *k = ctx;
	return strncmp(k->env->v[item], k->name, k->len) == 0;
}

/* Which policy entries are the last of their name (those are kept), and
 * which of the defaults they override: one pass with a hash index, so 40,000
 * variables cost 40,000 lookups, not 800 million comparisons. */
static int env_last_of_name(const strv *env, bool *keep, const char *const *defaults, size_t ndef,
			    bool *overridden)
{
	hindex idx = {0};
	for (size_t j = env->n; j-- > 0;) {
		struct env_probe k = {env, env->v[j], strcspn(env->v[j], "=") + 1};
		uint64_t h = hash_bytes(k.name, k.len);
		keep[j] = hindex_find(&idx, h, env_name_eq, &k) < 0;
		if (keep[j] && hindex_add(&idx, h, (uint32_t)j) < 0) {
			hindex_free(&idx);
			return -1;
		}
	}
	for (size_t i = 0; i < ndef; i++) {
		struct env_probe k = {env, defaults[i], strcspn(defaults[i], "=") + 1};
		overridden[i] = hindex_find(&idx, hash_bytes(k.name, k.len), env_name_eq, &k) >= 0;
	}
	hindex_free(&idx);
	return 0;
}

int sup_env_build(const cordon_policy *p, const char *check_dir, const struct secrets *sec, strv *env,
		  size_t *secret_start, cordon_error *err)
{
	if (sup_env_declared(p, env, err) < 0 || sup_env_cordon(p, check_dir, env, err) < 0)
		return -1;
	return sup_env_add_secrets(sec, env, secret_start, err);
}

int sup_env_declared(const cordon_policy *p, strv *env, cordon_error *err)
{
	const char *lang = policy_opts(p)->lang, *term = policy_opts(p)->term;
	char tmp[1024];
	const char *defaults[4];
	defaults[0] = "PATH=/usr/local/bin:/usr/bin:/bin";
	defaults[1] = "HOME=/tmp";
	snprintf(tmp, sizeof(tmp), "LANG=%s", lang && *lang ? lang : "C.UTF-8");
	char tmp2[1024];
	snprintf(tmp2, sizeof(tmp2), "TERM=%s", term && *term ? term : "dumb");
	defaults[2] = tmp;
	defaults[3] = tmp2;
	const strv *penv = &p->env;
	bool *keep = calloc(penv->n + 1, sizeof(bool));
	bool overridden[ARRAY_SIZE(defaults)];
	if (!keep || env_last_of_name(penv, keep, defaults, ARRAY_SIZE(defaults), overridden) < 0) {
		free(keep);
		return cordon_oom(err);
	}
	int rc = 0;
	for (size_t i = 0; i < ARRAY_SIZE(defaults) && rc == 0; i++)
		if (!overridden[i] && strv_push(env, defaults[i]) < 0)
			rc = -1;
	/* Policy entries, later ones winning. */
	for (size_t j = 0; j < penv->n && rc == 0; j++)
		if (keep[j] && strv_push(env, penv->v[j]) < 0)
			rc = -1;
	free(keep);
	return rc < 0 ? cordon_oom(err) : 0;
}

int sup_env_cordon(const cordon_policy *p, const char *check_dir, strv *env, cordon_error *err)
{
	/* A check's files: where its view shows them (a new name per check). */
	if (check_dir && check_dir[0]) {
		char v[128];
		snprintf(v, sizeof(v), "CORDON_CHECK_DIR=%s", check_dir);
		if (strv_push(env, v) < 0)
			return cordon_oom(err);
	}
	/* Egress: every common client finds the proxy. A declared endpoint on
	 * the host's loopback needs loopback names to go through the proxy too,
	 * so they are then left out of NO_PROXY. */
	if (p->net_allow.n) {
		char v[128];
		bool host_loopback = false;
		for (size_t i = 0; i < p->net_allow.n; i++) {
			const char *r = p->net_allow.v[i];
			host_loopback |= strncmp(r, "127.", 4) == 0 || strncmp(r, "[::1]", 5) == 0 ||
					 strncasecmp(r, "localhost:", 10) == 0;
		}
		static const char *const http[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
		for (size_t i = 0; i < ARRAY_SIZE(http); i++) {
			snprintf(v, sizeof(v), "%s=http://127.0.0.1:%d", http[i], PROXY_PORT);
			if (strv_push(env, v) < 0)
				return cordon_oom(err);
		}
		static const char *const all[] = {"ALL_PROXY", "all_proxy"};
		for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
			snprintf(v, sizeof(v), "%s=socks5h://127.0.0.1:%d", all[i], PROXY_PORT);
			if (strv_push(env, v) < 0)
				return cordon_oom(err);
		}
		if (!host_loopback &&
		    (strv_push(env, "NO_PROXY=localhost,127.0.0.1,::1") < 0 ||
		     strv_push(env, "no_proxy=localhost,127.0.0.1,::1") < 0))
			return cordon_oom(err);
	}
	/* The run's CA (TLS interception): every common client's variable
	 * names the bundle of the host's CAs and the run's. */
	if (p->net_allow.n && policy_intercepts(p)) {
		static const char *const ca[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
						 "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT", "AWS_CA_BUNDLE"};
		for (size_t i = 0; i < ARRAY_SIZE(ca); i++) {
			char v[128];
			snprintf(v, sizeof(v), "%s=%s", ca[i], CORDON_CA_FILE);
			if (strv_push(env, v) < 0)
				return cordon_oom(err);
		}
	}
	return 0;
}

int sup_env_add_secrets(const struct secrets *sec, strv *env, size_t *secret_start, cordon_error *err)
{
	/* Secrets delivered as variables come last (and win). */
	*secret_start = env->n;
	for (size_t i = 0; sec && i < sec->n; i++) {
		const struct secret_value *v = &sec->v[i];
		if (v->mount)
			continue;
		buf b = {0};
		size_t dl;
		const uint8_t *d = secret_delivered(v, &dl);
		if (buf_printf(&b, "%s=", v->name) < 0 || buf_append(&b, d, dl) < 0 ||
		    strv_push_take(env, b.p) < 0) {
			buf_wipe(&b);
			return cordon_oom(err);
		}
	}
	return 0;
}

