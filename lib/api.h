/* What the CLI needs of the public handles beyond include/cordon.h: it is
 * part of the project, and prints from the report's fields. Not exported. */
#pragma once
#include "cordon.h"
#include "report.h"

/* An empty report (status ok), for a run that never started (bad flags). */
cordon_report *api_report_new(void);
/* The report inside the handle. */
struct run_report *api_report_raw(cordon_report *r);
