/* bench-spawn N CMD...: run CMD N times (stdout/stderr to /dev/null), print
 * "median_ms p90_ms mean_ms" of the wall time of each run. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench-spawn N CMD...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double *t = calloc((size_t)n, sizeof(double)), sum = 0;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		pid_t pid;
		int st;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawn(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0) {
			perror("posix_spawn");
			free(t);
			return 1;
		}
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "run %d of %s failed (status %d)\n", i, argv[2], st);
			free(t);
			return 1;
		}
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof(double), cmp);
	printf("%.3f %.3f %.3f\n", t[n / 2], t[(n * 9) / 10], sum / n);
	free(t);
	return 0;
}
