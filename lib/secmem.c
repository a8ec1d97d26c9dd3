#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "error.h"
#include "secmem.h"

/* Each allocation: [header: mapping size][bytes...], one mapping. */
#define HDR 16

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (n + pg - 1) / pg * pg;
}

int secmem_protect(void *p, size_t len, cordon_error *err)
{
	if (madvise(p, len, MADV_DONTDUMP) < 0)
		return cordon_err_errno(err, "madvise(MADV_DONTDUMP) on the memory of secrets");
	/* Without CAP_IPC_LOCK the lock is bounded by RLIMIT_MEMLOCK: the bytes
	 * may then be swapped, which is what the host allows; still not dumped. */
	if (mlock(p, len) < 0 && errno != EPERM && errno != ENOMEM && errno != EAGAIN)
		return cordon_err_errno(err, "mlock on the memory of secrets");
	return 0;
}

void *secmem_alloc(size_t size, cordon_error *err)
{
	if (size > SIZE_MAX / 2) {
		cordon_oom(err);
		return NULL;
	}
	size_t total = page_round(size + HDR);
	uint8_t *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		cordon_err_errno(err, "mmap of %zu bytes for secrets", total);
		return NULL;
	}
	if (secmem_protect(m, total, err) < 0) {
		munmap(m, total);
		return NULL;
	}
	memcpy(m, &total, sizeof(total));
	return m + HDR;
}

size_t secmem_size(const void *p)
{
	size_t total;
	memcpy(&total, (const uint8_t *)p - HDR, sizeof(total));
	return total - HDR;
}

void secmem_free(void *p)
{
	if (!p)
		return;
	uint8_t *m = (uint8_t *)p - HDR;
	size_t total;
	memcpy(&total, m, sizeof(total));
	explicit_bzero(m, total);
	munmap(m, total); /* (unlocks too) */
}

/* Grow (or shrink) to size: a new mapping, the old bytes copied and wiped. */
static void *secmem_realloc(void *p, size_t size, cordon_error *err)
{
	uint8_t *n = secmem_alloc(size, err);
	if (!n)
		return NULL;
	if (p) {
		size_t old = secmem_size(p);
		memcpy(n, p, old < size ? old : size);
		secmem_free(p);
	}
	return n;
}

int sbuf_append(sbuf *b, const void *data, size_t len, cordon_error *err)
{
	if (!len)
		return 0;
	size_t cap = b->p ? secmem_size(b->p) : 0;
	if (!b->p || b->len + len > cap) {
		size_t want = cap ? cap * 2 : 4096 - HDR;
		while (want < b->len + len)
			want *= 2;
		uint8_t *n = secmem_realloc(b->p, want, err);
		if (!n)
			return -1;
		b->p = n;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

void sbuf_wipe(sbuf *b)
{
	secmem_free(b->p);
	b->p = NULL;
	b->len = 0;
}
