/* Streaming SHA-256 (OpenSSL libcrypto). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "cordon.h"

typedef struct sha256_ctx sha256_ctx;
sha256_ctx *sha256_new(void);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* Writes 64 hex digits + NUL and frees the context. */
void sha256_final_hex(sha256_ctx *c, char out[65]);
void sha256_free(sha256_ctx *c);

/* What hashing the files a run left may cost the supervisor, per list
 * (inputs, outputs). A run can leave a 20 GB sparse file or many hardlinks
 * to one big file: cordon must still return within seconds. */
#define HASH_BUDGET_BYTES (256ULL << 20)
/* The same for each output stream of a run (stdout, stderr): the report's
 * hash covers the first this many bytes (the run option output_hash). Each
 * hashed byte is read, hashed and written from cordon's own buffer, on the
 * path between the command and its reader: 64 MiB covers any log whole and
 * costs a bulk stream about 5 % of its throughput on two cores (256 MiB
 * cost it about 10 %; bench/relay.sh prints both). */
#define OUTPUT_HASH_BYTES (64ULL << 20)
#define HASH_BUDGET_NS (2ULL * 1000000000ULL)
struct hash_budget {
	uint64_t bytes_left;  /* logical bytes (holes included) still allowed */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 = set at the first file */
	uint64_t hashed;      /* bytes hashed so far */
	uint64_t skipped;     /* files left unhashed by the budget */
};
void hash_budget_init(struct hash_budget *b);
enum hash_result { HASH_OK, HASH_OVER_BYTES, HASH_OVER_TIME, HASH_UNREADABLE };
/* Hash the regular file open at fd, whose fstat is st, within the budget.
 * Holes of a sparse file are found with SEEK_DATA and hashed as the zeros
 * they read as, without reading them. A file larger than what is left of
 * the budget is not read at all. out gets the hex digest on HASH_OK. */
enum hash_result sha256_fd_budget(int fd, const struct stat *st, struct hash_budget *b, char out[65]);
void sha256_hex(const void *data, size_t len, char out[65]);
/* HMAC-SHA-256 (RFC 2104) of data under key. */
void hmac_sha256(const void *key, size_t klen, const void *data, size_t len, unsigned char out[32]);
