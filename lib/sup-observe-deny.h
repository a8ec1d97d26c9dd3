/* The seccomp observer's denials on record (sup-observe-deny.c). */
#pragma once
#include "observe.h"
#include "report.h"

/* A denial on record, attributed to its process group. */
int observer_deny(struct observer *o, struct run_report *rep, const char *kind, const char *target);
/* The process group, in the run's PID namespace, of pid (stopped in a
 * notified call); 0 if unknown. */
int observer_run_pgid(pid_t pid);
