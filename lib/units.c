#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "error.h"
#include "units.h"

int parse_size(const char *s, uint64_t *out, cordon_error *err)
{
	const char *p = s;
	uint64_t v = 0;
	if (!isdigit((unsigned char)*p))
		return cordon_err(err, 0, "malformed size \"%s\" (expected e.g. 512K, 64M, 1G)", s);
	while (isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return cordon_err(err, 0, "size \"%s\" is too large", s);
		v = v * 10 + d;
		p++;
	}
	static const struct { const char *sfx; unsigned shift; } sfx[] = {
		{"", 0}, {"B", 0}, {"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20},
		{"G", 30}, {"GiB", 30}, {"T", 40}, {"TiB", 40},
	};
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if (strcmp(p, sfx[i].sfx) == 0) {
			if (sfx[i].shift && v > (UINT64_MAX >> sfx[i].shift))
				return cordon_err(err, 0, "size \"%s\" is too large", s);
			*out = v << sfx[i].shift;
			return 0;
		}
	}
	return cordon_err(err, 0, "malformed size \"%s\": unknown suffix \"%s\" (use K, M, G, T or KiB, MiB, GiB, TiB)", s, p);
}

int parse_duration(const char *s, uint64_t *out_ns, cordon_error *err)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, frac_div = 1;
	if (!isdigit((unsigned char)*p))
		return cordon_err(err, 0, "malformed duration \"%s\" (expected e.g. 1.5, 500ms, 10s, 2m)", s);
	while (isdigit((unsigned char)*p)) {
		if (whole > 100000000ULL)
			return cordon_err(err, 0, "duration \"%s\" is too large", s);
		whole = whole * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return cordon_err(err, 0, "malformed duration \"%s\"", s);
		while (isdigit((unsigned char)*p)) {
			if (frac_div < 1000000000ULL) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
			p++;
		}
	}
	uint64_t mult;
	if (*p == '\0' || strcmp(p, "s") == 0)
		mult = 1000000000ULL;
	else if (strcmp(p, "ms") == 0)
		mult = 1000000ULL;
	else if (strcmp(p, "m") == 0)
		mult = 60ULL * 1000000000ULL;
	else if (strcmp(p, "h") == 0)
		mult = 3600ULL * 1000000000ULL;
	else
		return cordon_err(err, 0, "malformed duration \"%s\": unknown suffix \"%s\" (use ms, s, m or h)", s, p);
	/* 30 days is the most we accept: it keeps the arithmetic far from overflow. */
	const uint64_t max_ns = 30ULL * 24 * 3600 * 1000000000ULL;
	if (whole > max_ns / mult)
		return cordon_err(err, 0, "duration \"%s\" is too large (30 days at most)", s);
	uint64_t ns = whole * mult + (frac * mult) / frac_div;
	if (ns > max_ns)
		return cordon_err(err, 0, "duration \"%s\" is too large (30 days at most)", s);
	if (ns == 0)
		return cordon_err(err, 0, "duration \"%s\" must be positive", s);
	*out_ns = ns;
	return 0;
}

void format_size(uint64_t v, char *out, size_t outsz)
{
	static const char *u[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (i < 4 && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		i++;
	}
	snprintf(out, outsz, "%llu %s", (unsigned long long)v, u[i]);
}
