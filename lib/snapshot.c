#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "hash.h"
#include "snapshot.h"
#include "strv.h"

const char *change_name(enum change c)
{
	static const char *n[] = {"created", "modified", "deleted"};
	return n[c];
}

static int add_entry(struct snapshot *s, const char *path, const struct stat *st)
{
	if (s->n >= SNAPSHOT_MAX_ENTRIES) {
		s->truncated = true;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct snap_entry *e = realloc(s->e, cap * sizeof(*e));
		if (!e)
			return -1;
		s->e = e;
		s->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return -1;
	s->e[s->n++] = (struct snap_entry){
		p, st->st_mode, st->st_ino, st->st_size,
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		(int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	return 0;
}

static int walk(struct snapshot *s, int dirfd, const char *path, dev_t dev, int depth,
		cordon_error *err)
{
	if (depth > 256)
		return 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* unreadable: nothing we can report on */
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	struct dirent *e;
	while ((e = readdir(d)) && !s->truncated) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		buf p = {0};
		if (buf_printf(&p, "%s/%s", strcmp(path, "/") == 0 ? "" : path, e->d_name) < 0)
			return cordon_err(err, 12, "out of memory");
		if (add_entry(s, p.p, &st) < 0) {
			buf_free(&p);
			return cordon_err(err, 12, "out of memory");
		}
		if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
			_cleanup_close_ int sub = openat(dirfd, e->d_name,
							 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0 && walk(s, sub, p.p, dev, depth + 1, err) < 0) {
				buf_free(&p);
				return -1;
			}
		}
		buf_free(&p);
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->path, ((const struct snap_entry *)b)->path);
}

int snapshot_take(struct snapshot *s, const char *const *roots, size_t nroots, cordon_error *err)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < nroots; i++) {
		_cleanup_close_ int fd = open(roots[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0)
			continue;
		if (walk(s, fd, roots[i], st.st_dev, 0, err) < 0) {
			snapshot_free(s);
			return -1;
		}
	}
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

void file_list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->r[i].path);
	free(l->r);
	memset(l, 0, sizeof(*l));
}

static int add_record(struct file_list *l, const char *path, const char *base, enum change c,
		      bool regular, cordon_error *err)
{
	struct file_record *r = realloc(l->r, (l->n + 1) * sizeof(*r));
	if (!r)
		return cordon_err(err, 12, "out of memory");
	l->r = r;
	r = &l->r[l->n];
	memset(r, 0, sizeof(*r));
	size_t bl = base ? strlen(base) : 0;
	const char *rel = path;
	if (base && path_has_prefix(path, base) && path[bl] == '/')
		rel = path + bl + 1;
	r->path = strdup(rel);
	if (!r->path)
		return cordon_err(err, 12, "out of memory");
	r->change = c;
	r->regular = regular;
	l->n++;
	if (regular && c != CHANGE_DELETED) {
		cordon_error e2;
		if (sha256_file_at(AT_FDCWD, path, r->sha256, &r->bytes, &e2) < 0)
			r->sha256[0] = '\0'; /* vanished or unreadable: listed without a hash */
	}
	return 0;
}

int snapshot_diff(const struct snapshot *before, const struct snapshot *after, const char *base,
		  struct file_list *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	out->truncated = before->truncated || after->truncated;
	size_t i = 0, j = 0;
	while (i < before->n || j < after->n) {
		int c = i == before->n ? 1 : j == after->n ? -1 : strcmp(before->e[i].path, after->e[j].path);
		if (c < 0) {
			if (add_record(out, before->e[i].path, base, CHANGE_DELETED,
				       S_ISREG(before->e[i].mode), err) < 0)
				return -1;
			i++;
		} else if (c > 0) {
			if (!S_ISDIR(after->e[j].mode) &&
			    add_record(out, after->e[j].path, base, CHANGE_CREATED, S_ISREG(after->e[j].mode), err) < 0)
				return -1;
			j++;
		} else {
			const struct snap_entry *a = &before->e[i], *b = &after->e[j];
			bool changed = a->ino != b->ino || a->size != b->size || a->mtime_ns != b->mtime_ns ||
				       a->ctime_ns != b->ctime_ns || (a->mode & S_IFMT) != (b->mode & S_IFMT);
			if (changed && !S_ISDIR(b->mode) &&
			    add_record(out, b->path, base, CHANGE_MODIFIED, S_ISREG(b->mode), err) < 0)
				return -1;
			i++;
			j++;
		}
	}
	return 0;
}

int files_hash_tree(const char *const *roots, size_t nroots, const char *base,
		    struct file_list *out, cordon_error *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nroots; i++) {
		struct stat st;
		if (lstat(roots[i], &st) < 0)
			return cordon_err_errno(err, "input %s", roots[i]);
		if (S_ISREG(st.st_mode)) {
			if (add_record(out, roots[i], base, CHANGE_CREATED, true, err) < 0)
				return -1;
			continue;
		}
		struct snapshot s;
		if (snapshot_take(&s, &roots[i], 1, err) < 0)
			return -1;
		out->truncated |= s.truncated;
		for (size_t k = 0; k < s.n; k++) {
			if (S_ISREG(s.e[k].mode) &&
			    add_record(out, s.e[k].path, base, CHANGE_CREATED, true, err) < 0) {
				snapshot_free(&s);
				return -1;
			}
		}
		snapshot_free(&s);
	}
	return 0;
}
