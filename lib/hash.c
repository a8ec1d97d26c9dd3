#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <unistd.h>
#include "cleanup.h"
#include "error.h"
#include "hash.h"

struct sha256_ctx {
	EVP_MD_CTX *md;
};

sha256_ctx *sha256_new(void)
{
	sha256_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->md = EVP_MD_CTX_new();
	if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		sha256_free(c);
		return NULL;
	}
	return c;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
	if (c && len)
		EVP_DigestUpdate(c->md, data, len);
}

void sha256_final_hex(sha256_ctx *c, char out[65])
{
	unsigned char d[32];
	unsigned int n = 0;
	out[0] = '\0';
	if (c && EVP_DigestFinal_ex(c->md, d, &n) == 1)
		for (unsigned i = 0; i < n && i < 32; i++)
			snprintf(out + 2 * i, 3, "%02x", d[i]);
	sha256_free(c);
}

void sha256_free(sha256_ctx *c)
{
	if (!c)
		return;
	EVP_MD_CTX_free(c->md);
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
