/* Does a TCP listener of the run take a connect to this loopback address
 * and port? Asked of the kernel (NETLINK_SOCK_DIAG, the one socket a
 * connect there would reach, looked up as an incoming SYN on lo is) on a
 * netlink socket made once in the run's network namespace: two system calls
 * per question, whatever the number of the run's sockets (issue 27.8:
 * reading /proc/PID/net/tcp and tcp6 each time cost the supervisor
 * O(sockets) per refused connect). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct sockdiag;

/* Made by the supervisor right after the clone, before the command runs,
 * from the run's init: init is its child, not yet reaped, so init's PID
 * names init (pidfd is init's too; issue 27.8 review: never the notifying
 * thread, whose PID may be reused). The netlink socket is made in init's
 * network namespace and checked once, then, with a lookup of a listener of
 * its own (nothing the run binds later can change that). NULL only when out
 * of memory; otherwise sockdiag_listens answers, through the fallback where
 * the kernel cannot be asked (no sock_diag, or setns refused: it needs
 * CAP_SYS_ADMIN). */
struct sockdiag *sockdiag_open(pid_t init, int pidfd);

/* The same socket made by the run's init, in its own namespace, before the
 * command runs (a supervisor thread less per run): sockdiag_socket() there
 * (-1: the kernel cannot be asked), sent to the supervisor, which makes
 * the sockdiag with sockdiag_adopt(init, -1) right after the clone and
 * gives it the socket with sockdiag_set_fd before anything asks (the
 * fallback answers until then). */
int sockdiag_socket(void);
struct sockdiag *sockdiag_adopt(pid_t init, int fd);
void sockdiag_set_fd(struct sockdiag *d, int fd);

/* Does a listener of the run take a connect to sa (AF_INET, AF_INET6; an
 * IPv4-mapped IPv6 address is asked as the IPv4 one, where the kernel takes
 * such a connect)? A query that fails is answered, for that connect only
 * and counted, by fallback(init, port) (at most 1024 times per run; past
 * that, false: reported). d NULL: false. */
bool sockdiag_listens(struct sockdiag *d, const struct sockaddr *sa, bool (*fallback)(pid_t, uint16_t));
/* Queries that could not be asked of the kernel, so far (diagnostics). */
unsigned sockdiag_failures(const struct sockdiag *d);
void sockdiag_free(struct sockdiag *d);
