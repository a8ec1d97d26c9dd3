/* The supervisor's end of the seccomp listener: records denied system calls
 * (answering EPERM, as the filter decided) and observes path system calls
 * (answering CONTINUE: the kernel decides; the observer only records what
 * the boundary denies, predicted from the view).
 *
 * It runs on a thread of its own that sleeps in SECCOMP_IOCTL_NOTIF_RECV with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: the kernel then hands the CPU straight
 * from the calling task to this thread and back, where an epoll wake-up costs
 * two cross-CPU wake-ups per call (measured: ~300 us each on the test VM).
 * While it runs, the thread alone writes the report's denials; the
 * supervisor reads them after observer_stop(). */
#pragma once
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "notify-budget.h"
#include "report.h"
#include "sup-connector.h"
#include "strv.h"
#include "view.h"

struct dnsd;
struct net_rules;
struct pxhttp_secret;

struct observer {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct view view;
	uint64_t notifications;
	int clone3_nr, connect_nr, sendto_nr, bind_nr, listen_nr;
	bool strict_ports;        /* Landlock holds TCP to loopback_ports */
	bool proxy;               /* connections to 127.0.0.1:PROXY_PORT are the proxy's */
	/* network.transparent (issue 33): connects to declared endpoints are
	 * made here and handed in (sup-connect.c); those that take time, by
	 * the connector's thread (sup-connector.h), started with the
	 * observer's when dns is set. */
	const struct dnsd *dns; /* sup-dns.h */
	struct connector *conn;
	struct tally *tally; /* the bytes of those handed in (sup-tally.h) */
	struct connect_counts conn_counts;
	const strv *net_allow, *net_resolve;
	const struct net_rules *net_rules;       /* with methods/paths: the proxy's alone */
	const struct pxhttp_secret *psec;        /* injected secrets: their hosts are the proxy's */
	size_t npsec;
	struct handoff *handoff; /* those go to the proxy (sup-handoff.h), or NULL: refused */
	uint16_t loopback_ports[64];
	size_t nloopback_ports;
	bool sync_wakeup;
	bool protects;     /* the model has protected paths: writes are resolved through links */
	strv protect_names; /* protect_effective(): matched by protect_match() */
	strv rw_roots;      /* the writable paths the names are relative to (host) */
	strv rw_views;      /* each one where the run sees it (--rw HOST:PATH) */
	bool file_reports; /* report_file_denials (protected paths are refused and reported either way) */
	bool in_root;      /* cordon-oci: the view's paths are in the caller's own root (its
			    * /proc/PID/root), not the host's */
	bool maybe_gone; /* RECV said ENOENT: perhaps no task is left */
	uint64_t handle_ns; /* time spent handling (diagnostics) */
	/* What the run's notifications may cost (notify-budget.h): the thread
	 * leaves the listener unread while the bucket is empty. The size is
	 * set before observer_start (0: the defaults); the counts are read
	 * after observer_stop. */
	int64_t budget_burst, budget_refill;
	struct notify_budget budget;
	struct sockdiag *diag; /* the run's listeners, asked of the kernel (sockdiag.h); made by the supervisor after the clone */
	/* thread */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_bool violated;  /* a denial was recorded */
	struct run_report *rep;
	int pidfd;             /* to end the run on a violation, or -1 */
	struct sigaction usr1_was; /* the caller's SIGUSR1, put back by observer_stop */
};

/* The path calls to observe, NULL-terminated (for seccomp_build). */
extern const char *const observer_calls[];
/* overlay: the writable paths are overlays whose apply holds protected
 * paths back (changeset.h): a protected path absent at the start may be
 * made in the run's own view, so the observer does not refuse it. */
int observer_init(struct observer *o, const struct run_plan *plan, const cordon_policy *p, bool proxy,
		  bool overlay, cordon_error *err);
/* cordon-oci's observer (lib/oci-supervisor.c): the view of the container's
 * model (lib/oci-model.h), file reports on, no protected path; the socket
 * calls only with egress's network.loopback_ports (bind and connect, as
 * cordon run's strict ports: Landlock refuses, the observer records); the supervisor's own loop hands it each notification (o->listener
 * set to the listener that has one, observer_handle), no thread. */
int observer_init_oci(struct observer *o, const struct boundary_model *m, const cordon_policy *egress, bool proxy,
		      cordon_error *err);
/* Take the listener fd (from init) and start the thread. If pidfd >= 0 the
 * run is killed at the first denial (on_violation: kill). */
int observer_start(struct observer *o, int listener, struct run_report *rep, int pidfd,
		   cordon_error *err);
/* Stop and join the thread (idempotent). */
void observer_stop(struct observer *o);
/* Handle one pending notification (observer_main's, which holds the
 * listener unread while the budget is spent). Returns the number of denials recorded
 * (0 or more), or -1 if the listener is gone. */
int observer_handle(struct observer *o, struct run_report *rep);
void observer_free(struct observer *o);
