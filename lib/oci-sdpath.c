/* The systemd cgroup driver's "slice:prefix:name" as a cgroupfs path
 * (runc libcontainer/cgroups/systemd ExpandSlice and getUnitName; systemd's
 * unit_name_is_valid for the characters). Pure: no syscall, no allocation. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "oci-sdpath.h"
#include "error.h"

#define UNIT_MAX 255 /* systemd's UNIT_NAME_MAX less its NUL */

/* systemd's unit-name characters (VALID_CHARS: letters, digits, ":-_.\\"),
 * less ':' (the separator here) and '\\' (an escape cordon has no use for),
 * plus '@' (templates). */
static bool unit_chars(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '.' || c == '@'))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Append "%.*s" to out at *len; false where it does not fit. */
static bool put(char *out, size_t outsz, size_t *len, const char *s, size_t n)
{
	if (*len + n + 1 > outsz)
		return false;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return true;
}

/* The slice s (n bytes, ending ".slice") expanded into out: each dash
 * starts a parent. false where a component is empty ("a--b.slice",
 * "-a.slice", "a-.slice") or out is full. */
static bool expand_slice(const char *s, size_t n, char *out, size_t outsz, size_t *len)
{
	size_t base = n - strlen(".slice");
	if (base == 1 && s[0] == '-') /* "-.slice": the root slice */
		return true;
	for (size_t i = 0; i <= base; i++) {
		if (i < base && s[i] != '-')
			continue;
		/* a component ends at i: it is empty where i is 0 or follows a dash */
		if (i == 0 || s[i - 1] == '-')
			return false;
		if (!put(out, outsz, len, "/", 1) || !put(out, outsz, len, s, i) ||
		    !put(out, outsz, len, ".slice", 6))
			return false;
	}
	return true;
}

int oci_systemd_cgroup_path(const char *spec, char *out, size_t outsz, cordon_error *err)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':'))
		return cordon_err(err, EINVAL, "cgroupsPath \"%s\" is not slice:prefix:name (--systemd-cgroup)", spec);
	const char *slice = spec, *prefix = c1 + 1, *name = c2 + 1;
	size_t ns = (size_t)(c1 - spec), np = (size_t)(c2 - prefix), nn = strlen(name);
	if (ns == 0) {
		slice = "system.slice";
		ns = strlen(slice);
	}
	if (nn == 0)
		return cordon_err(err, EINVAL, "cgroupsPath \"%s\": the name (after the second ':') is empty", spec);
	if (!ends_with(slice, ns, ".slice") || ns == strlen(".slice") || ns > UNIT_MAX || !unit_chars(slice, ns))
		return cordon_err(err, EINVAL,
				  "cgroupsPath \"%s\": \"%.*s\" is not a slice name (NAME.slice; letters, digits, "
				  "\"-_.@\")",
				  spec, (int)ns, slice);
	if (!unit_chars(prefix, np) || !unit_chars(name, nn) || np + nn + strlen("-.scope") > UNIT_MAX)
		return cordon_err(err, EINVAL,
				  "cgroupsPath \"%s\": prefix and name make no unit name (letters, digits, \"-_.@\"; "
				  "at most %d bytes)",
				  spec, UNIT_MAX);
	size_t len = 0;
	if (outsz)
		out[0] = '\0';
	if (!expand_slice(slice, ns, out, outsz, &len))
		return cordon_err(err, EINVAL,
				  "cgroupsPath \"%s\": \"%.*s\" has an empty part between dashes (or is too long)", spec,
				  (int)ns, slice);
	bool ok = put(out, outsz, &len, "/", 1);
	if (ends_with(name, nn, ".slice")) /* a slice of its own, below the parent (as runc) */
		ok = ok && put(out, outsz, &len, name, nn);
	else if (np == 0)
		ok = ok && put(out, outsz, &len, name, nn) && put(out, outsz, &len, ".scope", 6);
	else
		ok = ok && put(out, outsz, &len, prefix, np) && put(out, outsz, &len, "-", 1) &&
		     put(out, outsz, &len, name, nn) && put(out, outsz, &len, ".scope", 6);
	if (!ok)
		return cordon_err(err, ENAMETOOLONG, "cgroupsPath \"%s\": the cgroup path is too long", spec);
	return 0;
}
