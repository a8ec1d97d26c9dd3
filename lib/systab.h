/* cordon's own table of system call numbers, for each architecture it
 * supports, as of the newest kernel it was decided against (SYSTAB_KERNEL).
 * libseccomp names only what its release knew (Debian 12's 2.5.4: up to
 * futex_requeue, 456); the filter and the denial report use this table
 * first, libseccomp's names after it. A call numbered above the table's
 * highest is newer than cordon: the filter refuses it (ENOSYS) and the
 * observer reports it, until someone adds it here and decides it
 * (docs/seccomp.md, "Calls newer than the table"). */
#pragma once
#include <stdint.h>

#define SYSTAB_KERNEL "6.18"

/* The highest number the table knows for audit architecture arch
 * (AUDIT_ARCH_*), or -1 for an architecture it does not have. */
int systab_max(uint32_t arch);
/* The name of call nr on arch, or NULL (a gap, or not in the table). */
const char *systab_name(uint32_t arch, long nr);
/* The number of call name on arch, or -1. */
int systab_number(uint32_t arch, const char *name);
/* The build's own architecture (AUDIT_ARCH_*): the one the filter allows. */
uint32_t systab_native(void);
/* Is nr newer than the table on the native architecture: above its highest,
 * and neither -1 (a tracer's skipped call) nor an x32 number (the filter
 * kills those as another ABI)? */
int systab_newer(long nr);
