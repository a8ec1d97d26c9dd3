/* After the run, on the host (lib/sup-after.c). */
#pragma once
#include "report.h"

struct run_plan;
/* Every protected path (protect.h) that was absent at the start and exists
 * now (or is a link now) is reported as a "file" denial. Opened from / without
 * following any link; never acts on what it finds. Returns the number found. */
int protect_check_after(const struct run_plan *plan, struct run_report *rep);
