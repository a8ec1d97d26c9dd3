/* The names at the top of a directory, read once (getdents) instead of one
 * look per name (issue 34: each look is a system call, and a protected-path
 * scan looks for over a hundred names that are mostly absent). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "strv.h"

/* dir's entries (not "." or ".."), sorted, into out. -1 (out empty) when
 * dir cannot be opened without following a link (open_root), or holds more
 * than max entries: the caller then looks name by name. */
int dirlist_read(const char *dir, size_t max, strv *out);

/* Is the name of len bytes one of the list's? */
bool dirlist_has(const strv *l, const char *name, size_t len);
