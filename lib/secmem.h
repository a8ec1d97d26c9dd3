/* Memory for secret bytes: their own anonymous mappings, marked
 * MADV_DONTDUMP (never in a core dump) and locked where the host allows it
 * (never swapped), wiped with explicit_bzero before they are unmapped.
 *
 * Ordinary heap memory cannot be kept out of a core dump: madvise wants
 * page-aligned ranges of whole mappings, and fails with EINVAL on malloc'd
 * memory. So every allocation here is its own mapping (a guard-free header
 * page prefix holds its size), and a failed madvise is an error. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"

/**
 * secmem_alloc() - zeroed memory for secret bytes.
 * @size: bytes wanted (0 gives a minimal mapping).
 * @err:  set on failure.
 * Returns the memory, or NULL (mmap or madvise(MADV_DONTDUMP) failed). mlock
 * is attempted; EPERM/ENOMEM/EAGAIN (no privilege, RLIMIT_MEMLOCK) are
 * tolerated: the bytes may then be swapped, but are still never dumped.
 */
void *secmem_alloc(size_t size, cordon_error *err);
/* Wipe (explicit_bzero) the whole mapping, unlock, unmap. NULL is a no-op. */
void secmem_free(void *p);
/* The usable size of an allocation. */
size_t secmem_size(const void *p);

/**
 * secmem_protect() - mark an existing page-aligned range MADV_DONTDUMP and
 * lock it where allowed. Returns 0, or -1 with @err naming the madvise
 * failure (EINVAL for memory that is not whole pages of a mapping).
 */
int secmem_protect(void *p, size_t len, cordon_error *err);

/* A growable byte buffer in secret memory. */
typedef struct {
	uint8_t *p;
	size_t len;
} sbuf;
int sbuf_append(sbuf *b, const void *data, size_t len, cordon_error *err);
void sbuf_wipe(sbuf *b);
