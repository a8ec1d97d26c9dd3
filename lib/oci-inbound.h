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
 * here). *relay its pid; 0 where c has no inbound port. Errors name the
 * port (in use in the pod's namespace...). */
int oci_inbound_start(const struct oci_config *c, pid_t init, pid_t *relay, cordon_error *err);
