/* The report's denials in OCI mode (lib/oci-observe.c). The observer is
 * cordon run's (lib/observe.h, observer_init_oci): init loads cordon's deny
 * list with SCMP_ACT_NOTIFY, and the path calls cordon run observes with
 * it, and sends the listener to the supervisor, which answers each denied
 * call EPERM, as the list would (ENOSYS to a call newer than cordon's
 * table), lets each path call go on (the kernel decides) and records, in a
 * run_report, what the container's model (lib/oci-model.h) says the
 * boundary denies: {"kind": "syscall", "target": "fsetxattr(size 20)"},
 * {"kind": "file", "target": "/ro/f"}, as cordon run's report names them. */
#pragma once
#include "json.h"
#include "report.h"

/* The report's "denials": the egress proxy's (net: its report, NULL when no
 * proxy ran; {"kind": "network", "target": HOST:PORT, ...} as cordon run's),
 * then the observer's (obs), each {"kind", "target", "count", "phase": "run"};
 * the observer's past its cap as one {"kind": "syscall", "target": "(other
 * calls)"}. */
void oci_denials_json(jwriter *w, const struct run_report *obs, const struct run_report *net);
