/* Inside the run: put a page of 'A's into stdout (a pipe) by reference --
 * vmsplice(2) of its memory, or (argv[1] = "file") splice(2) from a file it
 * wrote -- wait for the supervisor to tee+hash it, then overwrite the
 * memory/file with 'B's: the bytes still referenced in the destination pipe
 * change under the reader. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 'A', 65536);
	if (argc > 1) {
		int fd = open("/tmp/f.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || pwrite(fd, p, 65536, 0) != 65536)
			return 2;
		loff_t off = 0;
		if (splice(fd, &off, 1, NULL, 65536, 0) != 65536)
			return 3;
		usleep(500000);
		memset(p, 'B', 65536);
		pwrite(fd, p, 65536, 0);
	} else {
		struct iovec v = {p, 65536};
		if (vmsplice(1, &v, 1, 0) != 65536)
			return 2;
		usleep(500000);
		memset(p, 'B', 65536);
	}
	usleep(2000000);
	return 0;
}
