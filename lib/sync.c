#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sync.h"

/* The wire header; the text (len bytes) follows. */
struct frame {
	uint32_t type;
	int32_t value;
	int32_t code; /* MSG_ERROR's errno */
	uint32_t len;
};

#define TEXT_MAX (sizeof(((struct msg *)0)->path) - 1)

static bool has_text(uint32_t type)
{
	return type == MSG_ERROR || type == MSG_CGROUP || type == MSG_CHECK_RO;
}

/* A session's frames (session.h) carry a code and raw bytes (a path, an
 * error message, a struct sx_usage, a struct winsize), NULs allowed. */
static bool has_bytes(uint32_t type)
{
	return type >= MSG_SX_FD && type <= MSG_SX_CGROUP;
}

static int send_frame_n(int sock, uint32_t type, int32_t value, int32_t code, const char *text, size_t len,
			int fd);

static int send_frame(int sock, uint32_t type, int32_t value, int32_t code, const char *text, int fd)
{
	return send_frame_n(sock, type, value, code, text, text ? strnlen(text, TEXT_MAX + 1) : 0, fd);
}

int sync_send_bytes(int sock, uint32_t type, int32_t value, int32_t code, const void *data, size_t len, int fd)
{
	return send_frame_n(sock, type, value, code, data, len, fd);
}

static int send_frame_n(int sock, uint32_t type, int32_t value, int32_t code, const char *text, size_t len,
			int fd)
{
	if (len > TEXT_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	struct frame h = {type, value, code, (uint32_t)len};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)text, len}};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)(sizeof(h) + len) ? 0 : -1;
}

int sync_send(int sock, uint32_t type, int32_t value, const cordon_error *e, int fd)
{
	return send_frame(sock, type, value, e ? e->code : 0, e ? e->msg : NULL, fd);
}

int sync_send_path(int sock, uint32_t type, int32_t value, const char *path)
{
	return send_frame(sock, type, value, 0, path, -1);
}

int sync_recv(int sock, struct msg *m, int *fd)
{
	struct {
		struct frame h;
		char text[TEXT_MAX];
	} in;
	struct iovec iov = {&in, sizeof(in)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	if (fd)
		*fd = -1;
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;
			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (fd)
				*fd = got;
			else
				close(got);
		}
	}
	if (n < (ssize_t)sizeof(in.h) || (mh.msg_flags & MSG_TRUNC) || in.h.len != (size_t)n - sizeof(in.h) ||
	    (in.h.len && !has_text(in.h.type) && !has_bytes(in.h.type)) ||
	    (!has_bytes(in.h.type) && memchr(in.text, '\0', in.h.len))) {
		if (fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		errno = EPROTO;
		return -1;
	}
	memset(m, 0, sizeof(*m));
	m->type = in.h.type;
	m->value = in.h.value;
	if (in.h.type == MSG_ERROR || in.h.type == MSG_CHECK_RO || has_bytes(in.h.type)) {
		m->err.code = in.h.code;
		memcpy(m->err.msg, in.text, in.h.len);
	} else if (in.h.type == MSG_CGROUP) {
		memcpy(m->path, in.text, in.h.len);
	}
	return 1;
}
