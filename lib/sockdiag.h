/* Does a TCP listener of the run take a connect to this loopback address
 * and port? Asked of the kernel (NETLINK_SOCK_DIAG, the one socket a
 * connect there would reach, looked up as an incoming SYN is) on a netlink
 * socket made once in the run's network namespace: two system calls per
 * question, whatever the number of the run's sockets (issue 27.8: reading
 * /proc/PID/net/tcp and tcp6 each time cost the supervisor O(sockets) per
 * refused connect). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct sockdiag;

/* Does a listener of the run take a connect to sa (AF_INET or AF_INET6)?
 * *d is made at the first call (a netlink socket in the network namespace
 * of pid, a task of the run) and kept for the next. Where the kernel cannot
 * be asked (no sock_diag, or the namespace cannot be entered: setns needs
 * CAP_SYS_ADMIN), fallback(pid, port) answers, at most 1024 times per run;
 * past that, false. */
bool sockdiag_listens(struct sockdiag **d, pid_t pid, const struct sockaddr *sa, bool (*fallback)(pid_t, uint16_t));
void sockdiag_free(struct sockdiag *d);
