/* Writing the report (report-file.c): atomically, and for a run that could
 * write near the target, without following what the run could plant. */
#pragma once
#include "error.h"
#include "strv.h"

/* Write text to path atomically (temp file in the same directory, fsync,
 * rename); "-" writes to standard error. */
int report_write_file(const char *path, const char *text, cordon_error *err);

/* The same for the report of a run that could write the paths in writable:
 * the target's directory is resolved without following a symlink inside
 * them. An existing target that is not a regular file (a character device
 * such as /dev/null, a FIFO, /dev/stdout) outside them is written directly,
 * never replaced; a regular file or a new path is written beside and renamed
 * into place (inside a writable path, whatever the run left there is
 * replaced, not followed). */
int report_write_target(const char *path, const char *text, const strv *writable, cordon_error *err);

/* The same; everything past the directory is done relative to its fd, opened
 * without following links. Inside a writable path the report is never lost:
 * an entry at its name that cannot be replaced (a planted directory) is moved
 * aside, or the report kept under its temporary name; note (if not NULL)
 * then says so, for the operator ("" otherwise). */
int report_write_target_noted(const char *path, const char *text, const strv *writable, char *note,
			      size_t notesz, cordon_error *err);
