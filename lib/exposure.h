/* Secrets written into files: after the run, the files it created or
 * changed in its writable paths are scanned with the redactor's matcher
 * (every secret, every encoded form). The report names the secret and the
 * file, never the value ("secret_exposures"), and an exposure counts against
 * the containment verdict.
 *
 * Everything the run wrote is hostile: each file is opened beneath its
 * writable root's directory fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), O_RDONLY |
 * O_NONBLOCK | O_NOCTTY | O_NOFOLLOW, fstat'ed (regular files only), and
 * read within a budget: EXPOSURE_FILE_MAX bytes of each file and
 * EXPOSURE_TOTAL_MAX bytes in all. What the budget cut off is said
 * ("complete": false), not guessed. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "cordon.h"
#include "redact.h"
#include "snapshot.h"

#define EXPOSURE_FILE_MAX (16ull << 20)
#define EXPOSURE_TOTAL_MAX (64ull << 20)
#define EXPOSURE_MAX_ENTRIES 1000
/* Entries the full walk looks at (when the outputs list was cut). */
#define EXPOSURE_WALK_MAX 1000000

struct secret_exposure {
	char *name; /* the secret's name */
	char *path; /* as in the report's outputs */
	const char *where; /* "content", "name", "link" or "xattr" (static) */
};

struct exposure_list {
	struct secret_exposure *e;
	size_t n;
	bool scanned;  /* there were secrets, and the scan ran */
	bool complete; /* every changed entry read in full */
	uint64_t files, bytes;
};

/**
 * exposure_scan() - look for the secrets in the files a run changed.
 * @r:       the redactor (NULL or no secrets: nothing to do).
 * @roots:   the writable roots (absolute host paths).
 * @changed: the run's outputs (created or modified); paths relative to base
 *           or absolute.
 * @base:    the workspace, for relative paths.
 * @since_ns: when the run started (CLOCK_REALTIME): when the outputs list
 *           was cut, the roots are walked again and every entry changed
 *           since then (ctime or mtime) is scanned instead.
 * @out:     filled (appended to); free with exposure_list_free.
 * Returns 0, or -1 on an error of cordon's own (out of memory); a file that
 * cannot be opened safely is skipped and makes the scan incomplete.
 */
int exposure_scan(const redactor *r, const char *const *roots, size_t nroots, const struct file_list *changed,
		  const char *base, int64_t since_ns, struct exposure_list *out, cordon_error *err);
void exposure_list_free(struct exposure_list *l);
