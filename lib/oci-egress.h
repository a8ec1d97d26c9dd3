/* Egress in OCI mode (lib/oci-egress.c; docs/oci.md, "Egress"): the
 * annotation run.cordon.policy, a cordon policy in JSON whose "network"
 * section (allowed hosts, HTTP rules) is cordon run's. With it the container
 * gets a network namespace of its own and cordon's egress proxy: init
 * listens on 127.0.0.1:PROXY_PORT there, the supervisor serves it. */
#pragma once
#include "error.h"
#include "oci-config.h"

#define OCI_POLICY_ANNOTATION "run.cordon.policy"

/* Parse c's run.cordon.policy with cordon's policy parser into c->egress
 * (left NULL without the annotation or without a "network" section).
 * Refused, one line naming the annotation (with LINE:COL where the text is
 * at fault): malformed JSON, a key of the policy other than "network" (the
 * config decides those), network.loopback_ports and network.upstream_ca, a
 * config that joins a network namespace by path. A rule's methods and paths
 * apply to plain HTTP: the proxy opens no TLS in OCI mode, so a CONNECT to a
 * host that only such rules admit is refused. A config with no network namespace of its own
 * gets one (ns_new[OCI_NS_NET]): the proxy must be the only way out. */
int oci_egress_load(struct oci_config *c, cordon_error *err);
/* The proxy's variables (cordon run's: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY,
 * their lower-case forms, NO_PROXY unless an allowed host is on the host's
 * loopback) appended to c->env where the config does not set that name. */
int oci_egress_env(struct oci_config *c, cordon_error *err);
/* The names oci_egress_env would add to c's env (explain). */
int oci_egress_env_added(const struct oci_config *c, strv *names, cordon_error *err);
/* In init, in the container's network namespace: lo up, and a listening
 * socket on 127.0.0.1:PROXY_PORT (*fd). */
int oci_egress_listen(int *fd, cordon_error *err);
