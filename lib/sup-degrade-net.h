/* The degraded boundary's network (docs/hosts.md, issue 35): without a
 * network namespace of the run's own, the proxy and its rules are kept.
 * The run gets the usual proxy variables (127.0.0.1:PROXY_PORT); seccomp
 * lets it make inet and inet6 stream sockets only, refuses bind, listen
 * and TCP Fast Open, and makes every connect a user notification
 * (SYS_R_DEGRADED_NET), answered here in the supervisor's event loop. A
 * connect to the proxy's address is made by the supervisor: a socket of
 * its own connected to the proxy's way in (sup-handoff.h, announced as the
 * proxy's own), handed in over the run's (SECCOMP_IOCTL_NOTIF_ADDFD,
 * SETFD). Every other connect is refused (ECONNREFUSED) and is a network
 * denial naming its address. A connect is never let continue, and Landlock
 * (ABI 4+) refuses the run's own TCP connect and bind, so nothing the
 * supervisor did not make connects: no check to race. */
#pragma once
#include "error.h"
#include "sup-state.h"

/* The run's seccomp listener arrived (taken: closed by stop). */
int sup_degrade_net_start(struct sup *s, int listener, cordon_error *err);
/* The listener is readable (the loop's handler): one notification
 * answered. */
void sup_degrade_net_event(struct sup *s, int unused);
/* Stop listening (the run is over); again is fine. */
void sup_degrade_net_stop(struct sup *s);
