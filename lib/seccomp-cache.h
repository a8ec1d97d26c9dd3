/* The compiled seccomp programs of earlier runs, kept per user: a run whose
 * filter would be the same loads it instead of compiling it again
 * (libseccomp's compile and export cost about 2 ms and several hundred page
 * faults; a verified entry, a few system calls).
 *
 * An entry is named by the SHA-256 (the key) of everything that shapes the
 * program: the syscall plan (model_run.sys_deny, sys_rules,
 * sys_deny_policy), notify, the observed calls, the native architecture
 * and cordon's table of calls, the libseccomp version, cordon's version and
 * the build ids of the objects that hold cordon's and libseccomp's code.
 * Without a build id there is no key and no cache.
 *
 * Where: <state directory>/seccomp/<key>.bpf, the state directory being
 * the change-set key's (cordon_state_dir_open: checked from /, masked in
 * every run's view). Before an entry is used: the seccomp directory and the
 * file are the user's and not group- or other-writable, opened beneath the
 * state directory with no link followed and no mount crossed, the file a
 * regular one with one link, its size that of its header plus at most
 * BPF_MAXINSNS instructions, its header naming the same key, and the
 * SHA-256 of its program the one its header holds. Any doubt is a miss: the
 * filter is compiled, and no run fails because of the cache. Written beside
 * and renamed into place; at most SECCOMP_CACHE_MAX entries (the oldest
 * written go first). CORDON_SECCOMP_CACHE=off turns it off. docs/seccomp.md,
 * SECURITY.md. */
#pragma once
#include <stdbool.h>
#include "error.h"
#include "seccomp-policy.h"

#define SECCOMP_CACHE_MAX 32

struct model_run;
/* The filter of syscall plan r (as seccomp_build_from), from the cache when
 * a verified entry is there (*hit), else compiled. key gets the entry's
 * name to store the compiled program under (seccomp_cache_store), "" when
 * there is nothing to store (a hit, or no cache). */
int seccomp_build_cached(const struct model_run *r, bool notify, const char *const *observe,
			 struct seccomp_plan *out, bool *hit, char key[65], cordon_error *err);
/* Keep program p under key (best effort, nothing reported: a cache that
 * cannot be written is only a slower next run). Called after the filter is
 * sent, off the run's critical path. */
void seccomp_cache_store(const char key[65], const struct seccomp_plan *p);
/* The key of the filter seccomp_build_from(r, notify, observe) makes; -1
 * when it cannot be named (no build id, cache off). */
int seccomp_cache_key(const struct model_run *r, bool notify, const char *const *observe, char key[65]);
