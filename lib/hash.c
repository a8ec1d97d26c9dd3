#include <fcntl.h>
/* The low-level SHA-256 API of libcrypto: deprecated in OpenSSL 3 in favour of
 * EVP, but EVP drags the whole provider machinery into a static link (17k
 * relocations, ~2 ms of every start-up here); SHA256_* links just the
 * digest. Same library, same implementation (with the CPU's SHA extensions). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "cleanup.h"
#include "error.h"
#include "hash.h"

struct sha256_ctx {
	SHA256_CTX sha;
};

sha256_ctx *sha256_new(void)
{
	sha256_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (SHA256_Init(&c->sha) != 1) {
		free(c);
		return NULL;
	}
	return c;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
	if (c && len)
		SHA256_Update(&c->sha, data, len);
}

void sha256_final_hex(sha256_ctx *c, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[SHA256_DIGEST_LENGTH];
	out[0] = '\0';
	if (c && SHA256_Final(d, &c->sha) == 1) {
		for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
			out[2 * i] = hex[d[i] >> 4];
			out[2 * i + 1] = hex[d[i] & 15];
		}
		out[64] = '\0';
	}
	sha256_free(c);
}

void sha256_free(sha256_ctx *c)
{
	if (!c)
		return;
	explicit_bzero(c, sizeof(*c));
	free(c);
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	sha256_ctx *c = sha256_new();
	sha256_update(c, data, len);
	sha256_final_hex(c, out);
}

void hash_budget_init(struct hash_budget *b)
{
	*b = (struct hash_budget){.bytes_left = HASH_BUDGET_BYTES};
}

/* Account for n more bytes; false once the budget is spent. The clock is
 * read once per MiB, not per chunk. */
static bool spend(struct hash_budget *b, uint64_t n, uint64_t *since_clock, enum hash_result *why)
{
	if (n > b->bytes_left) {
		*why = HASH_OVER_BYTES;
		return false;
	}
	b->bytes_left -= n;
	*since_clock += n;
	if (*since_clock >= (1u << 20)) {
		*since_clock = 0;
		if (mono_ns() > b->deadline_ns) {
			*why = HASH_OVER_TIME;
			return false;
		}
	}
	return true;
}

enum hash_result sha256_fd_budget(int fd, const struct stat *st, struct hash_budget *b, char out[65])
{
	static const char zeros[65536];
	char tmp[65536];
	out[0] = '\0';
	if (!b->deadline_ns)
		b->deadline_ns = mono_ns() + HASH_BUDGET_NS;
	if (st->st_size < 0 || (uint64_t)st->st_size > b->bytes_left) {
		b->skipped++;
		return HASH_OVER_BYTES;
	}
	if (mono_ns() > b->deadline_ns) {
		b->skipped++;
		return HASH_OVER_TIME;
	}
	sha256_ctx *c = sha256_new();
	if (!c)
		return HASH_UNREADABLE;
	/* Fewer blocks than the size needs: look for holes. */
	bool sparse = (uint64_t)st->st_blocks * 512 < (uint64_t)st->st_size;
	off_t off = 0, data_end = sparse ? 0 : INT64_MAX;
	uint64_t since_clock = 0, spent = 0;
	enum hash_result why = HASH_OK;
	for (;;) {
		if (off >= data_end) {
			/* At a hole (or the first extent): zeros up to the next data. */
			off_t data = lseek(fd, off, SEEK_DATA);
			if (data < 0)
				data = errno == ENXIO ? st->st_size : off; /* ENXIO: a hole to the end */
			if (data < off)
				data = off;
			while (off < data) {
				size_t n = (size_t)(data - off < (off_t)sizeof(zeros) ? data - off : (off_t)sizeof(zeros));
				if (!spend(b, n, &since_clock, &why))
					goto over;
				sha256_update(c, zeros, n);
				spent += n;
				off += (off_t)n;
			}
			off_t hole = lseek(fd, off, SEEK_HOLE);
			data_end = hole > off ? hole : INT64_MAX;
			if (off >= st->st_size && hole <= off)
				break;
		}
		size_t want = sizeof(tmp);
		if (data_end != INT64_MAX && data_end - off < (off_t)want)
			want = (size_t)(data_end - off);
		ssize_t n = pread(fd, tmp, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sha256_free(c);
			b->bytes_left += spent; /* nothing of it was useful */
			return HASH_UNREADABLE;
		}
		if (n == 0)
			break;
		if (!spend(b, (uint64_t)n, &since_clock, &why))
			goto over;
		sha256_update(c, tmp, (size_t)n);
		spent += (uint64_t)n;
		off += n;
	}
	sha256_final_hex(c, out);
	b->hashed += spent;
	return HASH_OK;
over:
	/* The budget stays spent: the time was. */
	sha256_free(c);
	b->hashed += spent;
	b->skipped++;
	return why;
}

void hmac_sha256(const void *key, size_t klen, const void *data, size_t len, unsigned char out[32])
{
	/* RFC 2104 with SHA-256 (block 64 bytes); keys longer than a block
	 * are hashed first. */
	unsigned char k[64] = {0}, pad[64];
	SHA256_CTX c;
	if (klen > sizeof(k)) {
		SHA256_Init(&c);
		SHA256_Update(&c, key, klen);
		SHA256_Final(k, &c);
	} else if (klen) {
		memcpy(k, key, klen);
	}
	unsigned char inner[SHA256_DIGEST_LENGTH];
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, data, len);
	SHA256_Final(inner, &c);
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, inner, sizeof(inner));
	SHA256_Final(out, &c);
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(inner, sizeof(inner));
	explicit_bzero(&c, sizeof(c));
}
