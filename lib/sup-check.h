/* The task check's own logic (sup-check.c). */
#ifndef CORDON_SUP_CHECK_H
#define CORDON_SUP_CHECK_H
#include "sup-state.h"

/* The check's policy into *out; *out NULL (and 0) when the check does not
 * run, its verdict then in rep. */
int sup_check_policy(const cordon_policy *p, struct run_report *rep, const struct overlay_run *view,
		     cordon_policy **out, cordon_error *err);
/* The check's report crep (run under cp) into rep's task verdict. */
int sup_check_verdict(struct run_report *rep, const struct run_report *crep, const cordon_policy *cp,
		      cordon_error *err);

#endif
