/* The run report as JSON (report-json.c): serialised with every string
 * redacted, and the pieces the report and explain share. */
#pragma once
#include "json.h"
#include "report.h"

/* Shared JSON pieces (the report and explain). */
void report_write_limits(jwriter *w, const struct cordon_limit lim[LIM_COUNT]);
void report_write_grants(jwriter *w, const struct grant *g, size_t n);
/* The access rights Landlock ABI abi lacks (landlock_missing), an array. */
void report_write_landlock_missing(jwriter *w, int abi);
/* The report's "network" (the egress proxy's connections, endpoints,
 * requests), nothing when no proxy ran; cordon-oci's report has it too. */
void report_write_network(jwriter *w, const struct run_report *r);

/* Serialise to JSON text (caller frees), every string redacted. */
char *report_to_json(const struct run_report *r);

/* A message with the run's secrets redacted (caller frees). */
char *report_redact(const struct run_report *r, const char *msg);
