/* Pod semantics from the CRI annotations (lib/oci-pod.c). */
#pragma once
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "oci-config.h"

/* The pod's sandbox container, where this config is one of its containers. */
struct oci_pod {
	pid_t pid;      /* the sandbox's init, 0: not a pod's container */
	uint64_t start; /* its start time (pid reuse) */
};
/* A container of a pod (io.kubernetes.cri.container-type "container" with
 * io.kubernetes.cri.sandbox-id; CRI-O's io.kubernetes.cri-o.ContainerType
 * and SandboxID) whose config joins no user namespace and maps no ids of
 * its own joins the user namespace of its sandbox container, found as the
 * container SANDBOX-ID in the same state directory ROOT: a pod is one trust
 * domain, whose containers share its ids (a volume's files one writes, the
 * other reads as the same uid) and the namespaces the sandbox's user
 * namespace owns (its ipc, uts; pid where the pod shares it). Sets
 * c->ns_path[OCI_NS_USER]; oci_nsjoin then checks that namespace as any
 * joined by path. The sandbox container (type "sandbox"), a config without
 * the annotations, or one whose sandbox is not in ROOT (another runtime's):
 * nothing changed, pod->pid 0. A sandbox that is not running is an error. */
int oci_pod_join(struct oci_config *c, const char *root, struct oci_pod *pod, cordon_error *err);
/* A pod's egress, in oci_pod_join too (before oci_egress_load): where
 * such a container's config joins a network namespace by path and its
 * sandbox holds the pod's egress (its annotations: container-type
 * "sandbox" and run.cordon.policy with a "network" section; oci-egress.h),
 * the container joins the sandbox init's network namespace instead
 * (ns_path[OCI_NS_NET] /proc/PID/ns/net), where the sandbox's proxy
 * listens, once the path is checked to be the pod's (the namespace the
 * sandbox's supervisor is in); a container without the annotation gets
 * the sandbox's (c->ann_k/ann_v). Refused, naming the annotation: a policy
 * that differs from the sandbox's, one whose sandbox holds none, or is
 * not this root's or has stopped. */
/* Where the sandbox's TLS or secrets are in play (oci-egress.h), its
 * create publishes, in its state directory, what its containers need:
 * the run's CA bundle (public; the key stays in its supervisor) and the
 * injected secrets' placeholders ("NAME PLACEHOLDER" lines, no value),
 * each 0600; oci_pod_join reads them into c->pod_ca, c->pod_secrets. */
#define OCI_POD_CA "pod-ca.pem"
#define OCI_POD_SECRETS "pod-secrets"
/* The CRI annotations: the pod's sandbox container, or one of its
 * containers (with its sandbox's id). */
bool oci_pod_is_sandbox(const struct oci_config *c);
bool oci_pod_is_member(const struct oci_config *c);
/* Its sandbox's id (the annotation), or NULL. */
const char *oci_pod_sandbox_id(const struct oci_config *c);
/* After the namespace is open (oci_config_check): the sandbox's init is the
 * same process still, so the namespace opened is its. */
int oci_pod_recheck(const struct oci_pod *pod, cordon_error *err);
