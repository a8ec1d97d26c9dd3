/* Egress in OCI mode (lib/oci-egress.c; docs/oci.md, "Egress"): the
 * annotation run.cordon.policy, a cordon policy in JSON whose "network"
 * section (allowed hosts, HTTP rules, upstream_ca) and "secrets" (injected
 * credentials) are cordon run's. With it the container gets a network
 * namespace of its own and cordon's egress proxy: init listens on
 * 127.0.0.1:PROXY_PORT there, the supervisor serves it, opening TLS with a
 * CA of the run's where cordon run's would (init mounts its bundle at
 * CORDON_CA_FILE) and injecting the secrets' values, which the container
 * never holds (placeholders in its env). */
#pragma once
#include "error.h"
#include "oci-config.h"
#include "secrets.h"
#include "strv.h"

struct pxhttp_secret;
struct tls_ca;
struct tls_ops;

#define OCI_POLICY_ANNOTATION "run.cordon.policy"

/* Parse c's run.cordon.policy with cordon's policy parser into c->egress
 * (left NULL without the annotation or without a "network" section).
 * Refused, one line naming the annotation (with LINE:COL where the text is
 * at fault): malformed JSON, a key of the policy other than "network" (the
 * config decides those), network.loopback_ports naming the proxy's port, a
 * config that joins a network namespace by path, a secret neither injected
 * nor a file ("mount"), a "mount" at the top or in the CA's directory or in
 * a bind of the config's, secrets without a "network" section. A config with no network namespace of its own
 * gets one (ns_new[OCI_NS_NET]): the proxy must be the only way out.
 * A pod (oci-pod.h), where the config joins a network namespace by path:
 * its sandbox container gets one of its own as well, the pod's path moved
 * to c->pod_net (the supervisor makes the proxy's upstream sockets there);
 * one of its containers (oci_pod_join made it join the sandbox's) gets
 * c->pod_proxy, no proxy of its own. */
int oci_egress_load(struct oci_config *c, cordon_error *err);

/* The proxy's TLS (where cordon run's would open it: policy_intercepts) and
 * its credential broker, made at create (never by explain). */
struct oci_egress_run {
	struct secrets sec;          /* read from cordon-oci's environment or files */
	const struct tls_ops *tls;
	struct tls_ca *ca;           /* the run's CA: its key stays in the supervisor */
	buf bundle;                  /* the host's CAs and the run's certificate */
	struct pxhttp_secret *psec;  /* the injected secrets, the policy's order */
	size_t npsec;
	/* a pod's container (c->pod_proxy): the policy's secrets it reads
	 * itself (its files'), which sec's entries point into */
	struct cordon_secret *own;
	size_t nown;
};
/* At create, after oci_egress_env: read the policy's secrets (from
 * cordon-oci's own environment, or files: secrets_load), put each
 * placeholder in c->env as its variable (replacing the config's), and make
 * the run's CA and bundle; c->egress_run (NULL when the proxy opens no TLS
 * and no secret is a file; without TLS, no CA and an empty bundle).
 * A container of a pod (c->pod_proxy): the sandbox's placeholders and
 * bundle (c->pod_secrets, c->pod_ca), no CA; an injected secret's value
 * is not read (only the sandbox's proxy holds it).
 * Errors name the secret. */
int oci_egress_prepare(struct oci_config *c, cordon_error *err);
/* A pod's sandbox (c->pod_net) at create, in its state directory dirfd:
 * the placeholders of its injected secrets (OCI_POD_SECRETS) and its CA
 * bundle (OCI_POD_CA), 0600, for its containers' create (oci_pod_join):
 * a container of the pod gets those placeholders in place of its own and
 * that bundle, no CA (oci_egress_prepare). Nothing where c->egress_run is
 * NULL. */
int oci_egress_pod_publish(int dirfd, const struct oci_config *c, cordon_error *err);
/* Free c->egress_run: values wiped, the CA's key freed. */
void oci_egress_release(struct oci_config *c);
/* In init, first thing: its copies of the values and of the CA's key
 * (inherited from the supervisor at clone) wiped, but for the values of
 * the secrets it writes as files (oci_egress_mount_secrets); the bundle
 * stays. */
void oci_egress_drop_in_init(const struct oci_config *c);
/* In init, before pivot_root: a tmpfs of its own with the bundle as
 * ca.pem (0444), read-only, mounted on dirfd (an O_PATH descriptor of
 * CORDON_CA_DIR in the container's root, which init makes). */
int oci_egress_mount_ca(int dirfd, const struct oci_config *c, cordon_error *err);
/* In init, after the config's mounts and the CA's: each directory of the
 * policy's "mount" secrets made in the root (ensure_dir: links resolved in
 * it) and a read-only tmpfs of init's own mounted there, each secret of it
 * a 0400 file owned by the process's user (the value, or the placeholder
 * of an injected secret); then init's copies of the values are wiped. */
int oci_egress_mount_secrets(int rootfd, const struct oci_config *c,
			     int (*ensure_dir)(int rootfd, const char *path, cordon_error *err), cordon_error *err);
/* The proxy's variables (cordon run's: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY,
 * their lower-case forms, NO_PROXY unless an allowed host is on the host's
 * loopback) appended to c->env where the config does not set that name. */
int oci_egress_env(struct oci_config *c, cordon_error *err);
/* The names oci_egress_env would add to c's env, then the injected
 * secrets' (oci_egress_prepare's placeholders) (explain). */
int oci_egress_env_added(const struct oci_config *c, strv *names, cordon_error *err);
/* In init, in the container's network namespace: lo up, and a listening
 * socket on 127.0.0.1:PROXY_PORT (*fd). */
int oci_egress_listen(int *fd, cordon_error *err);
