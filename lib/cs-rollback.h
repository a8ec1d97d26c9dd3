/* Rolling back an interrupted apply (cs-rollback.c): the journal read as
 * untrusted input, each step undone, newest first, then the change set
 * removed. */
#pragma once
#include <stddef.h>
#include "changeset.h"
#include "error.h"

/* Remove a change set; an interrupted apply is first rolled back from the journal. */
int changeset_discard(struct changeset *cs, cordon_error *err);

/* One journal record (the format: cs-rollback.c). */
struct changeset_jrec {
	char kind; /* 'C', 'M' or 'B' */
	size_t layer;
	long long arg;
	char *rel; /* relative; no empty, "." or ".." component */
};

/**
 * changeset_parse_journal() - the records of a journal, strictly framed.
 * @text, @len: the journal's bytes (hostile: the names are the run's).
 * @nlayers:    the change set's layer count; a record of another is refused.
 * @where:      the journal's name, for the error.
 * @out, @n:    the records, in order; release with changeset_jrecs_free.
 * A record cut by the end of text (a crash while writing it) is dropped.
 * Returns 0, or -1 (EBADMSG naming where and the offset; *out NULL).
 */
int changeset_parse_journal(const char *text, size_t len, size_t nlayers, const char *where,
			    struct changeset_jrec **out, size_t *n, cordon_error *err);
void changeset_jrecs_free(struct changeset_jrec *j, size_t n);
