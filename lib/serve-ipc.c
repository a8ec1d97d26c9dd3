#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "serve-ipc.h"

int ipc_send(int sock, const char *data, size_t len, const int *fds, int nfds, int flags)
{
	struct iovec iov = {(void *)data, len};
	union {
		char b[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > IPC_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

ssize_t ipc_recv(int sock, char *data, size_t cap, int *fds, int *nfds)
{
	struct iovec iov = {data, cap - 1};
	union {
		char b[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b)};
	int got = 0;
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && got < IPC_MAX_FDS)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (nfds)
		*nfds = got;
	if (n < 0)
		return -1;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		if (nfds)
			*nfds = 0;
		errno = EMSGSIZE;
		return -1;
	}
	data[n] = 0;
	return n;
}

int ipc_memfd(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	const char *p = data;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int ipc_read_fd(int fd, size_t max, buf *b)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	char tmp[65536];
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		total += (size_t)n;
		if (total > max) {
			errno = EFBIG;
			return -1;
		}
		if (buf_append(b, tmp, (size_t)n) < 0) {
			errno = ENOMEM;
			return -1;
		}
	}
}
