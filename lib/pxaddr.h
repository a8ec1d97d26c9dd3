/* The egress proxy's refused address classes, as tables (pxaddr.c). */
#pragma once
#include <stdbool.h>
#include <sys/socket.h>

/* Is this address one a name may never lead to (loopback, private, ...)? */
bool proxy_addr_forbidden(const struct sockaddr *sa);
