/* The seccomp observer's parts (internal to sup-observe*.c): the
 * lifecycle and each call's handling are sup-observe.c's; it uses these. */
#pragma once
#include <sys/socket.h>
#include "observe.h"
#include "report.h"

/* How a call writes its path: never, always, by its open flags or how. */
enum wmode { W_NO, W_YES, W_OPENFLAGS, W_OPENHOW };

/* sup-observe-deny.c: a denial on record, attributed to its process group. */
int observer_deny(struct observer *o, struct run_report *rep, const char *kind, const char *target);

/* sup-observe-path.c: the path a call names (argument addr, relative to
 * dirfd), judged; 1 a denial, 0 none, -1 error; *refuse: fail the call. */
int observer_path(struct observer *o, struct run_report *rep, pid_t pid, int dirfd, uint64_t addr,
		  int write_mode, uint64_t flags, bool follow_last, int dir, bool *refuse);

/* sup-observe-net.c */
/* The type of socket fd of thread tid (SOCK_STREAM, ...), or -1. */
int observer_socket_type(pid_t tid, int fd);
/* The IPv4/IPv6 socket address of a connect, sendto or bind; false else. */
bool observer_read_inet(struct observer *o, uint64_t addr, uint64_t addrlen, char *target, size_t tsz,
			uint16_t *port, bool *loop, struct sockaddr_storage *out);
bool observer_port_declared(const struct observer *o, uint16_t port);
int observer_record_direct(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen);
