#include <fcntl.h>
/* The low-level SHA-256 API of libcrypto: deprecated in OpenSSL 3 in favour of
 * EVP, but EVP drags the whole provider machinery into a static link (17k
 * relocations, ~2 ms of every start-up here); SHA256_* links just the
 * digest. Same library, same implementation (with the CPU's SHA extensions). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stdio.h>
#include <unistd.h>
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

int sha256_file_at(int dirfd, const char *path, char out[65], uint64_t *bytes, cordon_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return cordon_err_errno(err, "open %s", path);
	sha256_ctx *c = sha256_new();
	if (!c)
		return cordon_err(err, 12, "out of memory");
	char tmp[65536];
	uint64_t total = 0;
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sha256_free(c);
			return cordon_err_errno(err, "read %s", path);
		}
		if (n == 0)
			break;
		sha256_update(c, tmp, (size_t)n);
		total += (uint64_t)n;
	}
	sha256_final_hex(c, out);
	*bytes = total;
	return 0;
}
