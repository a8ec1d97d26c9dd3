/* Inbound traffic to a pod under egress (lib/oci-inbound.c; docs/kubernetes.md,
 * "Inbound: run.cordon.inbound"). A pod's sandbox holding its egress gives
 * its containers a network namespace of cordon's (lo and the proxy), so
 * the pod's address (Services, containerPort, the kubelet's TCP and HTTP
 * probes) reaches none of their listeners. The annotation
 * run.cordon.inbound names the TCP ports that may come in: the sandbox's
 * supervisor listens on each in the pod's network namespace (every
 * address, IPv4 and IPv6) and relays each connection it accepts to
 * 127.0.0.1:PORT in cordon's namespace, the same port, nothing else. The
 * relay only accepts there and only connects here: the containers cannot
 * reach it, and it opens nothing on their behalf. */
#pragma once
#include <stdint.h>
#include <sys/types.h>
#include "error.h"
#include "oci-config.h"

#define OCI_INBOUND_ANNOTATION "run.cordon.inbound"
#define OCI_INBOUND_MAX 16  /* ports */
#define OCI_INBOUND_CONNS 256 /* connections relayed at once; past that, accepts wait */

/* What the relay did, counted by it in memory it shares with the
 * supervisor, which puts them in the sandbox's report (network.inbound). */
struct oci_inbound_counts {
	_Atomic uint64_t connections; /* accepted and relayed */
	_Atomic uint64_t dropped;     /* let go at the bound: the server had ended them, the client held them open */
	_Atomic uint64_t failed;      /* accepted, not relayed: nothing listened at 127.0.0.1:PORT, no descriptor */
	_Atomic uint64_t full;        /* times the bound was reached with none to drop: new ones waited in the backlog */
};

/* Parse c's run.cordon.inbound ("8080" or "8080,9090": ports 1-65535,
 * separated by commas or spaces) into c->inbound. Refused, one line naming
 * the annotation: a port malformed, out of range, repeated, more than
 * OCI_INBOUND_MAX, the egress proxy's (3128: the pod's address would reach
 * the proxy), and the annotation on a container that is not a pod's
 * sandbox holding its egress (c->pod_net; oci_egress_load first) nor a
 * container of such a pod (c->pod_proxy: the pod's annotations reach each
 * container, and there it changes nothing). */
int oci_inbound_load(struct oci_config *c, cordon_error *err);
/* In the sandbox's supervisor, in the pod's network namespace, once init's
 * namespace is made: a listening socket on each port (IPv6 with IPv4
 * mapped, or IPv4 alone where the namespace has no IPv6), then a child
 * process (killed with its parent) relaying each connection to
 * 127.0.0.1:PORT in init's network namespace (/proc/INIT/ns/net, opened
 * here). *relay its pid, *counts what it did (shared with it, never
 * freed: the supervisor's life); 0 and NULL where c has no inbound port.
 * Errors name the port (in use in the pod's namespace...). */
int oci_inbound_start(const struct oci_config *c, pid_t init, pid_t *relay, const struct oci_inbound_counts **counts,
		      cordon_error *err);
/* The relay's counts k (NULL: none) into the report's network.inbound. */
struct run_report;
void oci_inbound_report(const struct oci_config *c, const struct oci_inbound_counts *k, struct run_report *net);
