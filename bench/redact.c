/* The redactor alone (no pipes, no processes): N secrets with all their
 * forms; CPU time of this thread (BENCH_WALL=1: wall time), so that a busy
 * machine does not skew it;
 * forms, fed in 256 KiB chunks, as the relay feeds it. GB/s = 1e9 bytes/s.
 *   bench-redact [NSECRETS] [MiB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "redact.h"
#include "redact-stream.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(getenv("BENCH_WALL") ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double run(const redactor *r, const uint8_t *chunk, size_t clen, size_t total)
{
	struct redact_stream st;
	buf out = {0};
	redact_stream_init(&st, r);
	double t0 = now();
	for (size_t done = 0; done < total; done += clen) {
		out.len = 0;
		if (redact_feed(&st, chunk, clen, &out) < 0)
			exit(1);
	}
	redact_flush(&st, &out);
	double t = now() - t0;
	redact_stream_free(&st);
	buf_free(&out);
	return (double)total / t / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	size_t mib = argc > 2 ? (size_t)atoi(argv[2]) : 1024;
	redactor *r = redactor_new();
	cordon_error e;
	srand(1);
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (int i = 0; i < n; i++) {
		char name[16], v[33];
		for (int k = 0; k < 32; k++)
			v[k] = b64[rand() % 64];
		v[32] = 0;
		snprintf(name, sizeof(name), "TOK%d", i);
		if (redactor_add_secret(r, name, (const uint8_t *)v, 32, &e) < 0)
			return 1;
	}
	if (redactor_compile(r, &e) < 0)
		return 1;
	size_t clen = 256 * 1024;
	uint8_t *zero = calloc(1, clen), *text = malloc(clen);
	for (size_t i = 0; i < clen; i++)
		text[i] = (i % 77 == 76) ? '\n' : (uint8_t)b64[rand() % 64];
	double t0 = now();
	redactor *r2 = redactor_new();
	printf("%d secrets of 32 bytes, all forms, %zu MiB in 256 KiB feeds\n", n, mib);
	printf("  zeros:       %.2f GB/s\n", run(r, zero, clen, mib << 20));
	printf("  base64 text: %.2f GB/s (every byte a candidate)\n", run(r, text, clen, (mib / 4) << 20));
	(void)t0;
	redactor_free(r2);
	redactor_free(r);
	free(zero);
	free(text);
	return 0;
}
