/* The supervisor's end of the seccomp listener: records denied system calls
 * (answering EPERM, as the filter decided) and observes path system calls
 * (answering CONTINUE: the kernel decides; the observer only records what
 * the boundary denies, predicted from the view). */
#pragma once
#include <linux/seccomp.h>
#include <stdbool.h>
#include "report.h"
#include "view.h"

struct observer {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct view view;
	uint64_t notifications;
	int clone3_nr;
};

int observer_init(struct observer *o, const struct run_plan *plan, cordon_error *err);
/* Take the listener fd (from init). */
void observer_attach(struct observer *o, int listener);
/* Handle one pending notification. Returns the number of denials recorded
 * (0 or more), or -1 if the listener is gone. */
int observer_handle(struct observer *o, struct run_report *rep);
void observer_free(struct observer *o);
