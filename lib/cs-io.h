/* A change set's file I/O (cs-io.c), below its other files: whole writes,
 * control files (cordon's own: one link, no group or other write) read
 * beneath a directory descriptor, a descriptor's canonical path. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "error.h"

int cs_write_all(int fd, const void *p, size_t n);
int cs_write_file_at(int dfd, const char *name, const void *data, size_t n, cordon_error *err);
bool cs_control_file_ok(const struct stat *st);
ssize_t cs_read_file_at(int dfd, const char *name, char *out, size_t max);
int cs_dirfd_path(int fd, char *out, size_t sz);
