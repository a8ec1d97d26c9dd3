/* The plan of a run (types only): what the pre-flight (lib/pol-plan.c,
 * pol-plan.h) resolved before anything starts, as the supervisor, init and
 * explain read it. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "model.h"
#include "policy.h"
#include "strv.h"

/* The checks made before anything starts (the same ones `cordon explain`
 * shows): the workspace, the effective, canonical mount list, the model. */
struct run_plan {
	char workspace[4096];
	/* The current directory cordon started in, as opened then; the
	 * workspace's name was checked to lead to it (when it is the cwd). */
	dev_t ws_dev;
	ino_t ws_ino;
	char cwd_in[4096];
	struct cordon_mount *mounts;
	size_t nmounts;
	strv devices;      /* host character devices in /dev, canonical */
	/* A check's own files (policy check.files), resolved on the host: bound
	 * read-only at CHECK_FILES_DIR in the check's view; "" = none. */
	char check_files[4096];
	/* Where the check's view shows them: CHECK_FILES_DIR "-" and 128 random
	 * bits in hex, new for every check (a task cannot name it in advance). */
	char check_dir[64];
	/* The image directory the system view comes from (policy "root",
	 * resolved and checked: rootfs.h); "" = the host's. */
	char rootfs[4096];
	/* Everything the run sees, built last from the above (model.h). */
	struct boundary_model model;
};

/* The cgroup step of a run, tried and undone: a policy whose limits need a
 * cgroup this user cannot create fails here as the run would. */
struct cg_refusal {
	bool no_hierarchy;   /* cgroup_prepare: no usable hierarchy */
	const char *missing; /* cgroup_start: a controller our cgroup does not offer */
};
