/* The seccomp observer's look at a call's sockets (sup-observe-net.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "observe.h"
#include "report.h"

/* A copy (pidfd_getfd) of fd of thread tid, or -1. Before 6.9 a thread
 * other than its group's leader is reached through the leader. */
int observer_run_fd(pid_t tid, int fd);
/* The close-on-exec flag of fd of process pid, from /proc/PID/fdinfo/FD
 * (a flag of the fd, not of the file a pidfd_getfd copy shares); false if
 * it could not be read. */
bool observer_run_fd_cloexec(pid_t pid, int fd, bool *cloexec);
/* The type of socket fd of thread tid (SOCK_STREAM, ...), or -1. */
int observer_socket_type(pid_t tid, int fd);
/* The IPv4/IPv6 socket address of a connect, sendto or bind; false else. */
bool observer_read_inet(struct observer *o, uint64_t addr, uint64_t addrlen, char *target, size_t tsz,
			uint16_t *port, bool *loop, struct sockaddr_storage *out);
bool observer_port_declared(const struct observer *o, uint16_t port);
/* Does a TCP listener of the run take a connect to this loopback address? */
bool observer_run_listens(struct observer *o, const struct sockaddr_storage *ss, uint16_t port);
int observer_record_direct(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen);
/* network.transparent (sup-connect.c): a connect to a declared endpoint,
 * made here and handed in, or refused. 0: not one (go on), 1: answered,
 * 2: answered and a denial recorded, -1: the listener failed. */
/* network.transparent: is the run's fd a socket of the host's network
 * namespace (one handed in)? */
bool observer_host_socket(struct observer *o, int fd);
int observer_intercept_connect(struct observer *o, struct run_report *rep, int fd, uint64_t addr, uint64_t addrlen);
