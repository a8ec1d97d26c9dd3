/* What any relay of a command's output costs on this machine, without a
 * sandbox: stdin (a pipe) to stdout (a pipe), as `cordon run` relays. The
 * floor under cordon's relay figures in bench/relay.sh.
 *   bench-relay-floor splice   splice(2) only: no copy, no hash; after a
 *                              move of 64 KiB or more it sleeps 200 us, as
 *                              cordon's loop does (sup-run.c, COALESCE_NS),
 *                              so the writer fills its pipe a while rather
 *                              than wake the relay per write (without the
 *                              sleep: about 0.56 of a bare pipe here)
 *   bench-relay-floor copy     read(2) and write(2), 128 KiB at most per read
 *                              (as cordon reads):
 *                              what a relay that must see every byte (to
 *                              redact it) pays at least, no hash
 *   bench-relay-floor tee-sha  tee(2) forwards, a read takes the bytes back
 *                              and SHA-256 hashes them (cordon's path
 *                              without secrets), digest on stderr
 *   bench-relay-floor sha      no relay: read stdin and hash it; prints the
 *                              CPU seconds of the hashing alone (the reads
 *                              not counted)
 * Pipes are grown to 1 MiB, as cordon grows them. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CH (1024 * 1024)

static void put_digest(SHA256_CTX *c)
{
	unsigned char d[SHA256_DIGEST_LENGTH];
	SHA256_Final(d, c);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		fprintf(stderr, "%02x", d[i]);
	fprintf(stderr, "\n");
}

static int read_all(int fd, char *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, p + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[CH];
	const char *mode = argc > 1 ? argv[1] : "";
	SHA256_CTX c;
	SHA256_Init(&c);
	fcntl(0, F_SETPIPE_SZ, CH);
	fcntl(1, F_SETPIPE_SZ, CH);
	ssize_t n;
	if (!strcmp(mode, "splice")) {
		while ((n = splice(0, NULL, 1, NULL, CH, SPLICE_F_MOVE)) > 0)
			if (n >= 64 * 1024)
				nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
	} else if (!strcmp(mode, "copy")) {
		while ((n = read(0, buf, 128 * 1024)) > 0)
			for (ssize_t off = 0; off < n;) {
				ssize_t w = write(1, buf + off, (size_t)(n - off));
				if (w <= 0)
					return 1;
				off += w;
			}
	} else if (!strcmp(mode, "tee-sha")) {
		while ((n = tee(0, 1, CH, 0)) > 0) {
			if (read_all(0, buf, (size_t)n) < 0)
				return 1;
			SHA256_Update(&c, buf, (size_t)n);
		}
		put_digest(&c);
	} else if (!strcmp(mode, "sha")) {
		double spent = 0;
		while ((n = read(0, buf, CH)) > 0) {
			struct timespec a, b;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
			SHA256_Update(&c, buf, (size_t)n);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
			spent += (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		}
		put_digest(&c);
		printf("%.6f\n", spent);
	} else {
		fprintf(stderr, "usage: bench-relay-floor splice|copy|tee-sha|sha\n");
		return 2;
	}
	return n < 0;
}
