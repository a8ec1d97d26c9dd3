/* SIZE and DUR parsing (pure). */
#pragma once
#include <stdint.h>
#include "cordon.h"

/* SIZE: decimal bytes, or with suffix K/M/G/T (also KiB/MiB/GiB/TiB), binary
 * (1M = 2^20). Refuses empty, signs, fractions, unknown suffixes and overflow. */
int parse_size(const char *s, uint64_t *out, cordon_error *err);
/* DUR: seconds with optional decimals, or with suffix ms/s/m/h. Result in
 * nanoseconds; must be positive and at most 30 days. */
int parse_duration(const char *s, uint64_t *out_ns, cordon_error *err);
/* Human form of a size for messages ("64 MiB", "1536 bytes"). */
void format_size(uint64_t v, char *out, size_t outsz);
