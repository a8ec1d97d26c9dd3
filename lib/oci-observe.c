/* The supervisor's side of the deny list's listener (oci-observe.h). A
 * notification is answered at once, EPERM (ENOSYS for a call newer than
 * cordon's table), as the filter's own rule would be: the container sees nothing different, and a call held is never left
 * waiting on the report. */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include "oci-observe.h"
#include "seccomp-policy.h"
#include "systab.h"

static void count(struct oci_denials *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].name, name) == 0) {
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
	d->v[d->n++].count = 1;
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
	count(d, target);
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
		jw_str(w, "syscall");
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
