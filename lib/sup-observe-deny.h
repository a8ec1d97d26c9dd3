/* The seccomp observer's denials on record (sup-observe-deny.c). */
#pragma once
#include "observe.h"
#include "report.h"

/* A denial on record, attributed to its process group. */
int observer_deny(struct observer *o, struct run_report *rep, const char *kind, const char *target);
