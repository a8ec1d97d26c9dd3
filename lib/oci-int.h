/* cordon-oci's internals shared by lib/oci-run.c and lib/oci-init.c: the
 * supervisor <-> init messages (one SOCK_SEQPACKET pair; a frame is a type
 * byte and a text, with at most one descriptor). */
#pragma once
#include "oci.h"

enum {
	OCI_MSG_GO1 = 1, /* S->init: maps written, cgroup attached */
	OCI_MSG_TREE,    /* S->init: the idmapped root (fd) or none */
	OCI_MSG_PTY,     /* init->S: the pty master (fd) */
	OCI_MSG_READY,   /* init->S: created; waiting for start */
	OCI_MSG_GO2,     /* S->init: start (text: the state JSON for startContainer hooks) */
	OCI_MSG_ERROR,   /* init->S: text */
	OCI_MSG_NSREADY, /* init->S: its mount tree is a slave of the host's; attach the root */
};
#define OCI_MSG_MAX 8192
int oci_send(int sock, int type, const char *text, int fd);
/* The type (0 on EOF, -1 on error); text gets at most OCI_MSG_MAX-1 bytes; *fd
 * a received descriptor or -1. */
int oci_recv(int sock, char *text, int *fd);
void oci_init_main(const struct oci_config *c, int sock) __attribute__((noreturn));
int oci_find_exec(const struct oci_config *c, char *out, size_t outsz, cordon_error *err);
int oci_apply_process(const struct oci_config *c, cordon_error *err);
