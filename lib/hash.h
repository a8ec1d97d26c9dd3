/* Streaming SHA-256 (OpenSSL libcrypto). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"

typedef struct sha256_ctx sha256_ctx;
sha256_ctx *sha256_new(void);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* Writes 64 hex digits + NUL and frees the context. */
void sha256_final_hex(sha256_ctx *c, char out[65]);
void sha256_free(sha256_ctx *c);
/* Hash a file opened relative to dirfd without following symlinks. */
int sha256_file_at(int dirfd, const char *path, char out[65], uint64_t *bytes, cordon_error *err);
void sha256_hex(const void *data, size_t len, char out[65]);
