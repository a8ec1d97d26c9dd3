/* The supervisor's side of the deny list's listener (oci-observe.h). A
 * notification is answered at once, EPERM (ENOSYS for a call newer than
 * cordon's table), as the filter's own rule would be: the container sees nothing different, and a call held is never left
 * waiting on the report. */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include "oci-observe.h"
#include <arpa/inet.h>
#include <sys/socket.h>
#include "observe.h"
#include "proxy.h"
#include "sup-observe-net.h"
#include "seccomp-policy.h"
#include "systab.h"

static void count(struct oci_denials *d, const char *name, bool net)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].name, name) == 0 && d->v[i].net == net) {
			d->v[i].count++;
			return;
		}
	if (d->n == OCI_DENIALS_MAX) {
		d->other++;
		return;
	}
	size_t l = strlen(name);
	if (l >= sizeof(d->v[0].name))
		l = sizeof(d->v[0].name) - 1;
	memcpy(d->v[d->n].name, name, l);
	d->v[d->n].name[l] = '\0';
	d->v[d->n].net = net;
	d->v[d->n++].count = 1;
}

/* A bind or connect with network.loopback_ports: let through (Landlock
 * holds TCP to the declared ports, and to the proxy's for connect), and
 * recorded where Landlock refuses it, with cordon run's observer's
 * decision (sup-observe.c, sup-observe-net.c): a TCP bind to a port not
 * declared; a TCP connect but to the proxy or a declared port of
 * loopback. The memory is read before the answer, the id checked after
 * (the caller may have gone: then nothing is counted). */
static int observe_port(int fd, struct seccomp_notif *req, struct seccomp_notif_resp *resp, struct oci_denials *d)
{
	static struct observer o; /* what observer_read_inet and observer_port_declared read */
	o.req = req;
	o.strict_ports = true;
	o.proxy = d->proxy;
	memcpy(o.loopback_ports, d->ports, sizeof(o.loopback_ports));
	o.nloopback_ports = d->nports;
	bool bind = req->data.nr == (int)SCMP_SYS(bind);
	char target[INET6_ADDRSTRLEN + 24];
	uint16_t port;
	bool loop, deny = false;
	if (observer_read_inet(&o, req->data.args[1], req->data.args[2], target + 5, sizeof(target) - 5, &port, &loop,
			       NULL) &&
	    observer_socket_type((pid_t)req->pid, (int)req->data.args[0]) == SOCK_STREAM) {
		deny = bind ? !observer_port_declared(&o, port)
			    : port != 0 && !(loop && ((o.proxy && port == PROXY_PORT) || observer_port_declared(&o, port)));
		if (bind)
			memcpy(target, "bind ", 5);
	}
	bool live = seccomp_notify_id_valid(fd, req->id) == 0;
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	seccomp_notify_respond(fd, resp);
	if (deny && live)
		count(d, bind ? target : target + 5, true);
	return 1;
}

int oci_observe_one(int fd, struct oci_denials *d)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (seccomp_notify_alloc(&req, &resp) < 0)
		return -1;
	int r = seccomp_notify_receive(fd, req);
	if (r == -ENOENT || r == -EINTR) {
		/* the caller went (a signal) before it was read: nothing to answer */
		seccomp_notify_free(req, resp);
		return 0;
	}
	if (r < 0) {
		seccomp_notify_free(req, resp);
		return -1;
	}
	if (d->nports && (req->data.nr == (int)SCMP_SYS(bind) || req->data.nr == (int)SCMP_SYS(connect))) {
		r = observe_port(fd, req, resp, d);
		seccomp_notify_free(req, resp);
		return r;
	}
	/* named by cordon's table first (a call libseccomp does not know is
	 * still named), with the argument that made it a denial */
	uint64_t args[6];
	memcpy(args, req->data.args, sizeof(args));
	char target[sizeof(d->v[0].name)];
	seccomp_denial_target(req->data.nr, args, target, sizeof(target));
	resp->id = req->id;
	resp->val = 0;
	/* a call newer than the table: what a kernel without it answers */
	resp->error = systab_newer(req->data.nr) ? -ENOSYS : -EPERM;
	resp->flags = 0;
	seccomp_notify_respond(fd, resp); /* ENOENT: the caller is gone; counted all the same */
	count(d, target, false);
	seccomp_notify_free(req, resp);
	return 1;
}

void oci_denials_json(jwriter *w, const struct oci_denials *d, const struct run_report *net)
{
	jw_arr_begin(w);
	/* the egress proxy's refusals, as cordon run reports them */
	for (size_t i = 0; net && i < net->ndenials; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "kind", net->denials[i].kind);
		jw_key_str(w, "target", net->denials[i].target);
		jw_key_uint(w, "count", net->denials[i].count);
		jw_key_str(w, "phase", "run");
		jw_obj_end(w);
	}
	for (size_t i = 0; i < d->n; i++) {
		jw_obj_begin(w);
		jw_key(w, "kind");
		jw_str(w, d->v[i].net ? "network" : "syscall");
		jw_key(w, "target");
		jw_str(w, d->v[i].name);
		jw_key(w, "count");
		jw_uint(w, d->v[i].count);
		jw_key(w, "phase");
		jw_str(w, "run");
		jw_obj_end(w);
	}
	if (d->other) {
		jw_obj_begin(w);
		jw_key(w, "kind");
		jw_str(w, "syscall");
		jw_key(w, "target");
		jw_str(w, "(other calls)");
		jw_key(w, "count");
		jw_uint(w, d->other);
		jw_key(w, "phase");
		jw_str(w, "run");
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
