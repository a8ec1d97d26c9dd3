/* The seccomp observer's look at the path a call names (sup-observe-path.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "observe.h"
#include "report.h"

/* The path a call names (argument addr, relative to dirfd), judged; 1 a
 * denial, 0 none, -1 error; *refuse: fail the call. write_mode: enum wmode
 * (sup-observe.h). */
int observer_path(struct observer *o, struct run_report *rep, pid_t pid, int dirfd, uint64_t addr,
		  int write_mode, uint64_t flags, bool follow_last, int dir, bool *refuse);
