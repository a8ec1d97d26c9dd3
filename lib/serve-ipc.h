/* The server <-> session worker messages (session.h): one JSON object per
 * SOCK_SEQPACKET packet, with up to IPC_MAX_FDS descriptors; bodies larger
 * than a packet travel in a memfd. Also base64 for the API's byte fields. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "base64.h" /* its callers encode and decode the exec streams' data_b64 */
#include "strv.h"

#define IPC_MAX_PACKET (64 * 1024)
#define IPC_MAX_FDS 2

/* Send one packet; flags as for sendmsg (MSG_DONTWAIT). 0, or -1 (errno). */
int ipc_send(int sock, const char *data, size_t len, const int *fds, int nfds, int flags);
/* Receive one packet into buf (cap bytes, NUL-terminated: cap - 1 usable).
 * Returns its length, 0 when the peer closed, -1 on error (errno; EMSGSIZE
 * for a truncated packet). Passed fds go to fds[] (*nfds set; the rest
 * closed). */
ssize_t ipc_recv(int sock, char *data, size_t cap, int *fds, int *nfds);
/* A memfd holding len bytes of data, sealed and at offset 0; -1 on error. */
int ipc_memfd(const char *name, const void *data, size_t len);
/* Read all of a regular file's fd (at most max bytes) into b. 0 or -1
 * (errno; EFBIG past max). */
int ipc_read_fd(int fd, size_t max, buf *b);
