/* What cordon-oci's pieces share (lib/oci-common.c): the supervisor <->
 * init messages (one SOCK_SEQPACKET pair; a frame is a type byte and a
 * text, with at most one descriptor), the state's JSON and socket, pid
 * files, descriptors, hooks and warnings. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>
#include "cordon.h"
#include "oci-config.h"
#include "oci-state.h"

enum {
	OCI_MSG_GO1 = 1, /* S->init: maps written, cgroup attached */
	OCI_MSG_TREE,    /* S->init: the idmapped root (fd) or none */
	OCI_MSG_PTY,     /* init->S: the pty master (fd) */
	OCI_MSG_READY,   /* init->S: created; waiting for start */
	OCI_MSG_GO2,     /* S->init: start (text: the state JSON for startContainer hooks) */
	OCI_MSG_ERROR,   /* init->S: text */
	OCI_MSG_NSREADY, /* init->S: its mount tree is a slave of the host's; attach the root */
	OCI_MSG_LISTENER, /* init->S, after GO2: the deny list's seccomp listener (fd) */
	OCI_MSG_PROXY,   /* init->S, before READY: the egress proxy's listening socket, in the container's netns (fd) */
};
#define OCI_MSG_MAX 8192
int oci_send(int sock, int type, const char *text, int fd);
/* The type (0 on EOF, -1 on error); text gets at most OCI_MSG_MAX-1 bytes; *fd
 * a received descriptor or -1. */
int oci_recv(int sock, char *text, int *fd);
/* a and b (namespace files) are the same namespace */
bool oci_same_ns(const char *a, const char *b);
/* data written to name in directory dfd as a new file (O_EXCL|O_NOFOLLOW,
 * a random temporary name) renamed over name within dfd; -1 with errno. */
int oci_write_at(int dfd, const char *name, const void *data, size_t len, mode_t mode);
int oci_write_pid_file(const char *path, pid_t pid, cordon_error *err);
/* The pty master fd to the engine's --console-socket path (SCM_RIGHTS). */
int oci_send_console(const char *path, int fd, cordon_error *err);
int oci_state_json_of(const struct oci_state *s, enum oci_status st, char *out, size_t outsz);
/* ROOT/ID/sup.sock reached through the state directory's descriptor */
int oci_sup_sock_path(int dirfd, struct sockaddr_un *a);
/* The state directory of id opened (*dfd) and read into *s; lock: held
 * locked (flock) until *dfd is closed. */
int oci_open_read(const char *root, const char *id, bool lock, int *dfd, struct oci_state *s, cordon_error *err);
/* Closes every descriptor from `from` up but the n in keep. create's
 * supervisor keeps none of its caller's descriptors but stdio and
 * --preserve-fds (from = 3 + N), and passes only those to init, so a reader
 * of a pipe the caller inherited sees its EOF when the caller exits, as with
 * runc. */
void oci_close_fds_except(int from, const int *keep, size_t n);
/* Waits up to ms (-1: no limit) for process pid (started at start) to go. */
void oci_wait_gone(pid_t pid, uint64_t start, int ms);

/* Run hooks of kind k with the state on stdin, in order; the first that fails
 * (exit status, signal, timeout) stops them and is the error. */
int oci_hooks_run(const struct oci_config *c, enum oci_hook_kind k, const char *state_json, cordon_error *err);
/* poststart and poststop (the spec: "the runtime MUST log a warning, but the
 * remaining hooks and lifecycle continue"): every hook runs; each failure
 * goes to the warning callback. Returns how many failed. */
int oci_hooks_run_warn(const struct oci_config *c, enum oci_hook_kind k, const char *state_json);
/* The library prints nothing: warnings (a failed poststart or poststop hook)
 * go to fn, which the program sets (cordon-oci: stderr and --log). */
void oci_set_warn(void (*fn)(const char *msg));
void oci_warn(const cordon_error *e);
