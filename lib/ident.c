/* The process's effective identity, remembered (ident.h). */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ident.h"

/* One page of the process's own: [0] the euid, [1] the egid, each with
 * bit 32 set once known. Wiped (zero) in a child. */
static uint64_t *page;
static bool unusable;

static uint64_t *ident_page(void)
{
	uint64_t *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
	if (p || __atomic_load_n(&unusable, __ATOMIC_RELAXED))
		return p;
	long psz = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (madvise(m, (size_t)psz, MADV_WIPEONFORK) < 0) {
		munmap(m, (size_t)psz);
		__atomic_store_n(&unusable, true, __ATOMIC_RELAXED);
		return NULL;
	}
	uint64_t *want = NULL;
	if (!__atomic_compare_exchange_n(&page, &want, (uint64_t *)m, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(m, (size_t)psz); /* another thread's is the one */
		return want;
	}
	return m;
}

static uint32_t remembered(int i, uint32_t (*ask)(void))
{
	uint64_t *p = ident_page();
	uint64_t v = p ? __atomic_load_n(&p[i], __ATOMIC_RELAXED) : 0;
	if (v >> 32)
		return (uint32_t)v;
	uint32_t id = ask();
	if (p)
		__atomic_store_n(&p[i], (1ULL << 32) | id, __ATOMIC_RELAXED);
	return id;
}

static uint32_t ask_euid(void)
{
	return (uint32_t)geteuid();
}

static uint32_t ask_egid(void)
{
	return (uint32_t)getegid();
}

uid_t ident_euid(void)
{
	return (uid_t)remembered(0, ask_euid);
}

gid_t ident_egid(void)
{
	return (gid_t)remembered(1, ask_egid);
}

void ident_forget(void)
{
	uint64_t *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
	if (p) {
		__atomic_store_n(&p[0], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p[1], 0, __ATOMIC_RELAXED);
	}
}
