/* The report's denials in OCI mode (oci-observe.h). */
#include "oci-observe.h"

static void denials_of(jwriter *w, const struct run_report *r)
{
	for (size_t i = 0; r && i < r->ndenials; i++) {
		jw_obj_begin(w);
		jw_key_str(w, "kind", r->denials[i].kind);
		jw_key_str(w, "target", r->denials[i].target);
		jw_key_uint(w, "count", r->denials[i].count);
		jw_key_str(w, "phase", "run");
		jw_obj_end(w);
	}
}

void oci_denials_json(jwriter *w, const struct run_report *obs, const struct run_report *net)
{
	jw_arr_begin(w);
	/* the egress proxy's refusals, as cordon run reports them */
	denials_of(w, net);
	denials_of(w, obs);
	if (obs && obs->denials_omitted) {
		jw_obj_begin(w);
		jw_key_str(w, "kind", "syscall");
		jw_key_str(w, "target", "(other calls)");
		jw_key_uint(w, "count", obs->denials_omitted);
		jw_key_str(w, "phase", "run");
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
