/* The supervisor <-> sandbox-init protocol: typed frames over one
 * SOCK_SEQPACKET pair, each sized to its content, optionally carrying one
 * descriptor (SCM_RIGHTS). The numbered sync points are described in sup-run.c's
 * header.
 *
 * On the wire a frame is a header (type, value, an errno, the length of the
 * text) and then the text, without a NUL: MSG_ERROR's message, MSG_CGROUP's
 * path; every other type has none. A frame that does not add up (short,
 * truncated, a text where its type has none, a NUL inside the text) is an
 * error for the receiver. */
#pragma once
#include <stdint.h>
#include "cordon.h"

enum msg_type {
	MSG_GO1 = 1,   /* P->C sync 1: uid/gid maps written */
	MSG_TREE,      /* P->C: an idmapped tree for mount index .value (fd) */
	MSG_FILTER,    /* P->C: the seccomp program, sealed memfd; .value = notify */
	MSG_GO2,       /* P->C sync 2: cgroup attached, snapshot taken, trees sent */
	MSG_ERROR,     /* C->P: setup failed (.err); the command never started */
	MSG_EXEC_OK,   /* C->P: the command was exec'd (.value = its pid inside) */
	MSG_EXIT,      /* C->P: the command's wait status (.value) */
	MSG_LISTENER,  /* C->P: the seccomp notification fd (fd) */
	MSG_PROXY_FD,  /* C->P: the proxy's listening socket, in the run's netns (fd) */
	MSG_CGROUP,    /* P->C: the run's own cgroup directory, host path in .path;
			* .value = v1 controller index (cg_v1_controllers), -1 on v2 */
	MSG_OVERLAY,   /* P->C, as root: the change set's layer directory of mount
			* index .value (a detached clone, fd; overlay.h) */
	MSG_PTY,       /* C->P: the master of the run's own pty (--pty), fd */
	/* A session (session.h): init stays up as an agent. .value = the slot
	 * (an exec) or request (a file operation) the frame is about. */
	MSG_SX_FD,      /* P->C: stdio fd .err.code (0, 1, 2) of exec .value (fd) */
	MSG_SX_EXEC,    /* P->C: start exec .value; fd = sealed memfd, or the request
			 * inline (session.h, SX_EXEC_*; session-agent.c) */
	MSG_SX_STARTED, /* C->P: exec .value started (.err.code = pid) or not (.err) */
	MSG_SX_EXIT,    /* C->P: exec .value ended: .err.code = wait status,
			 * .err.msg = struct sx_usage */
	MSG_SX_SIGNAL,  /* P->C: signal .err.code to exec .value's process group */
	MSG_SX_FILE,    /* P->C: file operation .err.code (enum sx_file_op) on .err.msg */
	MSG_SX_FILE_R,  /* C->P: its result: .err.code = errno or 0 (fd) */
	MSG_SX_END,     /* P->C: end the session: init exits */
	MSG_SX_CGROUP,  /* P->C: cgroup.procs (fd, opened by the supervisor) of
			 * exec .value's cgroup, or of the session's own (.value -1);
			 * .err.code = its index (session-cg.h) */
	MSG_CHECK_RO,   /* C->P: a task check's workspace (plan mount .value) stayed
			 * read-only, .err.msg says why (overlay.h) */
	MSG_DNS_FD,     /* C->P: the run's resolver's socket in its netns (network.transparent):
			 * .value 0 = UDP, 1 = TCP listening (fd) */
	MSG_DIAG_FD,    /* C->P: a checked NETLINK_SOCK_DIAG socket in the run's netns
			 * (sockdiag.h), before MSG_LISTENER; none if it cannot be asked */
	MSG_LAYER,      /* P->C, as root: lower layer .value of the workspace's stack
			 * (policy ws_layers; an idmapped, read-only clone, fd) */
	MSG_CGJOIN,     /* P->C: "tasks" of the run's cgroup in v1 hierarchy .value
			 * (fd, opened by the supervisor): init moves itself in */
	MSG_VIEW,       /* P->C: every input of the view sent (trees, layers, the
			 * cgroup's names): init builds it while P finishes sync 2 */
};

/* A received frame. */
struct msg {
	uint32_t type;
	int32_t value;
	union {
		cordon_error err;                       /* MSG_ERROR */
		char path[sizeof(((cordon_error *)0)->msg)]; /* MSG_CGROUP */
	};
};

/* Send a frame; e (MSG_ERROR only) is its error, fd >= 0 is passed along.
 * Returns 0 or -1 (errno set). */
int sync_send(int sock, uint32_t type, int32_t value, const cordon_error *e, int fd);
/* Send a frame with a path (MSG_CGROUP): -1 with ENAMETOOLONG if it does not
 * fit struct msg's path. */
int sync_send_path(int sock, uint32_t type, int32_t value, const char *path);
/* Send a session frame (MSG_SX_*): code, and len raw bytes (NULs allowed)
 * that arrive in .err.code and .err.msg. */
int sync_send_bytes(int sock, uint32_t type, int32_t value, int32_t code, const void *data, size_t len, int fd);
/* Receive a frame: 1 = frame, 0 = peer closed, -1 = error (a malformed
 * frame included). A passed descriptor is stored in *fd (if fd is non-NULL;
 * else it is closed). */
int sync_recv(int sock, struct msg *m, int *fd);
