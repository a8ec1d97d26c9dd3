/* The session's files API: read, write, delete and list below the
 * workspace (done by the agent, MSG_SX_FILE), each answered to its client
 * and noted in the session's evidence. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session-files.h"
#include "cleanup.h"
#include "cordon-pty.h"
#include "error.h"
#include "hash.h"
#include "json.h"
#include "policy.h"
#include "redact.h"
#include "report.h"
#include "serve-ipc.h"
#include "session-util.h"
#include "session.h"
#include "session-cg.h"
#include "sync.h"
#include "units.h"
#include "session-worker.h"

void sx_do_file(struct sx *s, const jnode *req, int reply, int body)
{
	const jnode *act = json_get(req, "action"), *path = json_get(req, "path");
	static const char *const ops[] = {NULL, "read", "write", "delete", "list"};
	int op = 0;
	for (int i = 1; i <= SX_FILE_LIST && act && act->str; i++)
		if (strcmp(act->str, ops[i]) == 0)
			op = i;
	/* path_hex: the path's bytes (any name, UTF-8 or not); path: the same
	 * as a JSON string, for older servers. */
	const jnode *hex = json_get(req, "path_hex");
	char raw[sizeof(s->files[0].path)];
	const char *p = path && path->type == J_STR ? path->str : NULL;
	if (hex && hex->type == J_STR && hex->str) {
		size_t hl = strlen(hex->str), i;
		for (i = 0; hl % 2 == 0 && i < hl / 2 && i + 1 < sizeof(raw); i++) {
			unsigned v;
			if (sscanf(hex->str + 2 * i, "%2x", &v) != 1 || !v || !isxdigit((unsigned char)hex->str[2 * i]) ||
			    !isxdigit((unsigned char)hex->str[2 * i + 1]))
				break;
			raw[i] = (char)v;
		}
		raw[i] = '\0';
		p = hl % 2 == 0 && i == hl / 2 ? raw : NULL;
	}
	char absp[sizeof(s->files[0].path)];
	if (p && p[0] && p[0] != '/' && sx_abs(s, p, absp, sizeof(absp)))
		p = absp; /* relative: the session's cwd's */
	if (!op || !p || p[0] != '/' || strlen(p) >= sizeof(s->files[0].path)) {
		sx_reply_error(reply, 400, "path: an absolute path (as the session sees it) or one relative to its cwd, of at most 1023 bytes, is required");
		goto out;
	}
	int k = -1;
	for (int i = 0; i < (int)(sizeof(s->files) / sizeof(s->files[0])) && k < 0; i++)
		if (!s->files[i].used)
			k = i;
	if (k < 0) {
		sx_reply_error(reply, 429, "too many file operations at once in this session");
		goto out;
	}
	struct sx_file *f = &s->files[k];
	f->used = true;
	f->op = op;
	f->reply = reply;
	f->body = body;
	reply = body = -1;
	snprintf(f->path, sizeof(f->path), "%s", p);
	cordon_error e = {0};
	e.code = op;
	const jnode *par = json_get(req, "parents");
	if (op == SX_FILE_WRITE && par && par->type == J_BOOL && par->b)
		e.code |= SX_FILE_PARENTS;
	snprintf(e.msg, sizeof(e.msg), "%s", f->path);
	sync_send(s->sock, MSG_SX_FILE, k, &e, -1);
out:
	sx_close_fd(&reply);
	sx_close_fd(&body);
}

static void evidence_add(struct sx *s, const struct sx_file *f, uint64_t bytes, const char *sha, int err)
{
	jwriter w = {0};
	w.filter = sx_redact_cb;
	w.filter_ctx = s->rep->redact;
	static const char *const ops[] = {NULL, "read", "write", "delete", "list"};
	jw_obj_begin(&w);
	jw_key(&w, "op");
	jw_str(&w, ops[f->op]);
	jw_key(&w, "path");
	jw_str(&w, f->path);
	if (!err && (f->op == SX_FILE_READ || f->op == SX_FILE_WRITE)) {
		jw_key(&w, "bytes");
		jw_uint(&w, bytes);
		jw_key(&w, "sha256");
		jw_str(&w, sha);
	}
	jw_key(&w, "error");
	if (err)
		jw_str(&w, strerror(err));
	else
		jw_null(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0 && s->nevidence < 100000) {
		if (s->nevidence++)
			buf_append(&s->evidence, ",", 1);
		buf_append(&s->evidence, w.out.p, w.out.len);
	}
	buf_free(&w.out);
}

static int errno_http(int e)
{
	switch (e) {
	case ENOENT:
		return 404;
	case EACCES:
	case EPERM:
	case EROFS:
		return 403;
	case EFBIG:
	case ENOSPC:
	case EDQUOT:
		return 413;
	default:
		return 400;
	}
}

static void list_dir(struct sx *s, int fd, int reply, struct sx_file *f)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		sx_close_fd(&dfd);
		sx_reply_error(reply, 500, "list %s: %s", f->path, strerror(errno));
		return;
	}
	jwriter w = {0};
	w.filter = sx_redact_cb;
	w.filter_ctx = s->rep->redact;
	jw_obj_begin(&w);
	jw_key(&w, "entries");
	jw_arr_begin(&w);
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d)) && n < LIST_MAX;) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		const char *t = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" :
				S_ISLNK(st.st_mode) ? "symlink" : "other";
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, de->d_name);
		size_t nl = strlen(de->d_name);
		if (!json_utf8_valid(de->d_name, nl)) {
			/* "name" shows it with U+FFFD; these are its bytes, for
			 * ?path= (percent-encoded) to reach it. */
			buf b = {0};
			if (b64_encode(&b, de->d_name, nl) == 0 && buf_append(&b, "", 1) == 0) {
				jw_key(&w, "name_b64");
				jw_str(&w, b.p);
			}
			buf_free(&b);
		}
		jw_key(&w, "type");
		jw_str(&w, t);
		jw_key(&w, "size");
		jw_uint(&w, (uint64_t)st.st_size);
		jw_key(&w, "mode");
		char m[8];
		snprintf(m, sizeof(m), "%04o", (unsigned)(st.st_mode & 07777));
		jw_str(&w, m);
		jw_obj_end(&w);
		n++;
	}
	closedir(d);
	jw_arr_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) == 0) {
		int mfd = ipc_memfd("cordon-list", w.out.p, w.out.len);
		const char *j = "{\"body\":\"fd\"}";
		if (mfd >= 0)
			ipc_send(reply, j, strlen(j), &mfd, 1, MSG_DONTWAIT);
		sx_close_fd(&mfd);
	}
	buf_free(&w.out);
}

void sx_file_result(struct sx *s, int k, int err, int fd)
{
	if (k < 0 || k >= (int)(sizeof(s->files) / sizeof(s->files[0])) || !s->files[k].used) {
		sx_close_fd(&fd);
		return;
	}
	struct sx_file *f = &s->files[k];
	char sha[65] = "";
	uint64_t bytes = 0;
	if (err || (fd < 0 && f->op != SX_FILE_DELETE)) {
		err = err ? err : EIO;
		sx_reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
	} else if (f->op == SX_FILE_READ) {
		buf b = {0};
		if (ipc_read_fd(fd, FILE_MAX, &b) < 0) {
			err = errno;
			sx_reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
		} else {
			bytes = b.len;
			sha256_hex(b.p ? b.p : "", b.len, sha);
			int mfd = ipc_memfd("cordon-file", b.p ? b.p : "", b.len);
			const char *j = "{\"body\":\"fd\"}";
			if (mfd >= 0)
				ipc_send(f->reply, j, strlen(j), &mfd, 1, MSG_DONTWAIT);
			else
				sx_reply_error(f->reply, 500, "%s: %s", f->path, strerror(errno));
			sx_close_fd(&mfd);
		}
		buf_wipe(&b);
	} else if (f->op == SX_FILE_WRITE) {
		buf b = {0};
		int rc = f->body >= 0 ? ipc_read_fd(f->body, FILE_MAX, &b) : 0;
		size_t off = 0;
		while (rc == 0 && off < b.len) {
			ssize_t w = write(fd, b.p + off, b.len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += (size_t)w;
		}
		if (rc < 0) {
			err = errno ? errno : EIO;
			sx_reply_error(f->reply, errno_http(err), "%s: %s", f->path, strerror(err));
		} else {
			bytes = b.len;
			sha256_hex(b.p ? b.p : "", b.len, sha);
			char j[160];
			snprintf(j, sizeof(j), "{\"bytes\":%zu,\"sha256\":\"%s\"}", b.len, sha);
			sx_reply_json(f->reply, j);
		}
		buf_wipe(&b);
	} else if (f->op == SX_FILE_DELETE) {
		sx_reply_json(f->reply, "{}");
	} else {
		list_dir(s, fd, f->reply, f);
	}
	evidence_add(s, f, bytes, sha, err);
	sx_close_fd(&fd);
	sx_close_fd(&f->reply);
	sx_close_fd(&f->body);
	f->used = false;
	sx_arm_idle(s);
}
