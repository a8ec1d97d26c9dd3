/* The denials of cordon's deny list in OCI mode (lib/oci-observe.c): init
 * loads the list with SCMP_ACT_NOTIFY and sends the listener to the
 * supervisor, which answers each call EPERM, as the list would (ENOSYS to a
 * call newer than cordon's table), and counts it for the report's denials
 * under its seccomp_denial_target name ("fsetxattr(size 20)"). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "json.h"
#include "report.h"

#define OCI_DENIALS_MAX 64
struct oci_denials {
	struct { char name[64]; unsigned long count; bool net; } v[OCI_DENIALS_MAX];
	size_t n;
	unsigned long other; /* calls past OCI_DENIALS_MAX distinct names */
	/* run.cordon.policy's network.loopback_ports (set by the supervisor):
	 * the deny list then also notifies bind and connect, which are let
	 * through (Landlock decides) and a TCP one Landlock refuses recorded
	 * as cordon run's observer does ({"kind": "network", "target":
	 * "bind 127.0.0.1:P"} or "127.0.0.1:P") */
	uint16_t ports[64];
	size_t nports;
	bool proxy; /* connect to 127.0.0.1:PROXY_PORT is the proxy's */
};
/* Answer one notification on listener fd (EPERM, ENOSYS to a call newer
 * than cordon's table; bind and connect with loopback_ports: let through,
 * a refused one counted) and count it: 1, or 0 when the caller went before it
 * was read (nothing to answer). -1 when the listener is done (every process
 * of the filter gone) or broken: the caller stops polling it. */
int oci_observe_one(int fd, struct oci_denials *d);
/* The report's "denials": the egress proxy's (net: its report, NULL when no
 * proxy ran; {"kind": "network", "target": HOST:PORT, ...} as cordon run's),
 * then {"kind": "syscall", "target": NAME, "count": N, "phase": "run"} per
 * call. */
void oci_denials_json(jwriter *w, const struct oci_denials *d, const struct run_report *net);
