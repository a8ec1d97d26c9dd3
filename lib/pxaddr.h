/* The egress proxy's refused address classes, as tables (pxaddr.c), and
 * how a host and port are written in a target. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Is this address one a name may never lead to (loopback, private, ...)? */
bool proxy_addr_forbidden(const struct sockaddr *sa);

/* "host:port", or "[host]:port" where host is an IPv6 literal (holds a
 * ':'): the one form of a target in denials, logs and the report. */
void host_port(char *out, size_t n, const char *host, unsigned port);
