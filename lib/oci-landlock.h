/* Landlock in OCI mode (docs/oci.md, "Landlock"): a ruleset derived from
 * config.json's root and mounts, the second filesystem layer beside the
 * mount tree. Read and execute on the whole of the container's view; every
 * right below a writable root and below each mount that is not read-only;
 * nothing on a read-only bind or tmpfs, even below a writable parent (the
 * parent's grant is carved around it). Nothing of the host: the rules are
 * taken after pivot_root, on the container's own paths. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "landlock.h"
#include "oci-config.h"
#include "model.h"

/* One grant, as config.json states it (explain prints these; prepare
 * expands them on the container's view). */
struct oci_ll_grant {
	const char *path;  /* in the container (config's strings) */
	bool write;        /* every right the ABI has; else read and execute */
	bool carve;        /* write except below the read-only paths under it */
	bool device;       /* a linux.devices node: read, write, ioctl */
	const char *why;   /* "root.path", "mount (tmpfs)", ... */
};
struct oci_ll_grants {
	struct oci_ll_grant *g;
	size_t n;
	/* read-only paths a write grant is carved around: read-only binds and
	 * tmpfs, readonlyPaths, maskedPaths, outside the kernel's filesystems */
	strv except;
};
/* The grants of c's boundary model (lib/oci-model.h; no syscall): the
 * root's read (and, writable, its carved write), every entry with all
 * rights (carved unless a kernel filesystem), each device's; the read-only
 * entries a carve goes around (oci_model_carved_around) as except. */
int oci_landlock_grants_of(const struct boundary_model *m, struct oci_ll_grants *out, cordon_error *err);
/* The same, of c's model. */
int oci_landlock_grants(const struct oci_config *c, struct oci_ll_grants *out, cordon_error *err);
void oci_landlock_grants_free(struct oci_ll_grants *g);

/* init, after pivot_root (the container's paths are "/"): the kernel's ABI
 * and the rules of c's grants on the view as mounted (a carved grant
 * becomes one rule per entry beside the read-only paths). ABI 0: nothing
 * is applied (best effort, the report says so). Allocates. */
int oci_landlock_prepare(const struct oci_config *c, struct landlock_plan *out, cordon_error *err);
/* init, last before seccomp and exec: restrict itself (allocates nothing;
 * needs CAP_SYS_ADMIN in its user namespace or no_new_privs). */
int oci_landlock_apply(const struct landlock_plan *lp, cordon_error *err);
/* The plan in one line for the supervisor's report: "landlock ABI RULES". */
void oci_landlock_describe(const struct landlock_plan *lp, char *out, size_t outsz);
/* The reverse of describe; false if text is not one. */
bool oci_landlock_parse(const char *text, int *abi, unsigned *rules);
