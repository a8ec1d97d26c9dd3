/* A policy's canonical JSON (pol-canon.h): the form its hash in the report
 * (policy_sha256) and `cordon validate` are taken over. Part of the policy
 * layer; pure. */
#include <stdlib.h>
#include "cleanup.h"
#include "json.h"
#include "policy.h"
#include "pol-canon.h"

char *policy_canonical_json(const cordon_policy *p)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "mounts");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nmounts; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "mode");
		jw_str(&w, mount_mode_name(p->mounts[i].mode));
		jw_key(&w, "path");
		jw_str(&w, p->mounts[i].path);
		if (p->mounts[i].at) {
			jw_key(&w, "at");
			jw_str(&w, p->mounts[i].at);
		}
		jw_key(&w, "size");
		jw_uint(&w, p->mounts[i].size);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	/* Only when asked: the hash of a policy that says nothing of it
	 * stays what it was. */
	if (p->workspace_mode_asked || p->on_failure != ONF_APPLY) {
		jw_key(&w, "workspace_mode");
		jw_str(&w, workspace_mode_name(p->workspace_mode));
		jw_key(&w, "on_failure");
		jw_str(&w, on_failure_name(p->on_failure));
	}
	const struct { const char *k; const strv *v; } lists[] = {
		{"env", &p->env}, {"network", &p->net_allow}, {"syscalls_allow", &p->sys_allow},
		{"syscalls_deny", &p->sys_deny}, {"inputs", &p->inputs},
	};
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		jw_key(&w, lists[l].k);
		jw_str_array(&w, (const char *const *)lists[l].v->v, lists[l].v->n);
	}
	jw_key(&w, "secrets");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nsecrets; i++) {
		jw_obj_begin(&w);
		jw_key(&w, "name");
		jw_str(&w, p->secrets[i].name);
		jw_key(&w, "env");
		jw_str(&w, p->secrets[i].from_env);
		jw_key(&w, "file");
		jw_str(&w, p->secrets[i].from_file);
		jw_key(&w, "mount");
		jw_str(&w, p->secrets[i].mount);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "limits");
	jw_obj_begin(&w);
	for (int i = 0; i < LIM_COUNT; i++) {
		if (!p->limits[i].set)
			continue;
		jw_key(&w, limit_name(i));
		jw_uint(&w, p->limits[i].value);
	}
	jw_obj_end(&w);
	jw_key(&w, "loopback_ports");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->nloopback_ports; i++)
		jw_uint(&w, p->loopback_ports[i]);
	jw_arr_end(&w);
	/* Only when set: a policy without them keeps its hash. */
	if (p->net_transparent) {
		jw_key(&w, "transparent");
		jw_bool(&w, true);
	}
	if (p->net_resolve.n) {
		jw_key(&w, "resolve");
		jw_arr_begin(&w);
		for (size_t i = 0; i < p->net_resolve.n; i++)
			jw_str(&w, p->net_resolve.v[i]);
		jw_arr_end(&w);
	}
	/* Only when there are any: a policy without devices keeps its hash. */
	if (p->devices.n) {
		jw_key(&w, "devices");
		jw_arr_begin(&w);
		for (size_t i = 0; i < p->devices.n; i++)
			jw_str(&w, p->devices.v[i]);
		jw_arr_end(&w);
	}
	jw_key(&w, "check");
	jw_str(&w, p->check);
	/* Only when given: the hash of a policy without them is unchanged. */
	if (p->check_files) {
		jw_key(&w, "check_files");
		jw_str(&w, p->check_files);
	}
	if (p->check_cwd) {
		jw_key(&w, "check_cwd");
		jw_str(&w, p->check_cwd);
	}
	if (p->check_env.n) {
		jw_key(&w, "check_env");
		jw_str_array(&w, (const char *const *)p->check_env.v, p->check_env.n);
	}
	jw_key(&w, "cwd");
	jw_str(&w, p->cwd);
	/* Only when given: the hash of a policy without it is unchanged. */
	if (p->image_workspace) {
		jw_key(&w, "workspace");
		jw_str(&w, p->image_workspace);
	}
	if (p->root) {
		jw_key(&w, "root");
		jw_str(&w, p->root);
	}
	jw_key(&w, "on_violation");
	jw_str(&w, p->kill_on_violation ? "kill" : "report");
	jw_key(&w, "report_file_denials");
	jw_bool(&w, !p->no_file_reports);
	jw_key(&w, "allow_weaker");
	jw_uint(&w, p->allow_weaker);
	jw_key(&w, "ledger");
	jw_arr_begin(&w);
	for (size_t i = 0; i < p->ledger.n; i++) {
		jw_obj_begin(&w);
		jw_key(&w, p->ledger.ev[i].alloc ? "alloc" : "free");
		jw_str(&w, p->ledger.ev[i].name);
		if (p->ledger.ev[i].alloc) {
			jw_key(&w, "bytes");
			jw_uint(&w, p->ledger.ev[i].bytes);
		}
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	return jw_take(&w);
}
