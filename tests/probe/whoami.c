/* Static probe: prints what the process sees of its own identity, one
 * "key value" per line, for the integration tests to assert on. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

static void status_field(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
			char *v = line + strlen(key) + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			printf("%s %s", key, v);
		}
	}
	fclose(f);
}

int main(void)
{
	char host[256] = "";
	gethostname(host, sizeof(host));
	printf("uid %d\neuid %d\ngid %d\npid %d\nppid %d\nhostname %s\n", (int)getuid(), (int)geteuid(),
	       (int)getgid(), (int)getpid(), (int)getppid(), host);
	printf("no_new_privs %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	status_field("CapInh");
	status_field("CapPrm");
	status_field("CapEff");
	status_field("CapBnd");
	status_field("CapAmb");
	status_field("Seccomp");
	status_field("Groups");
	char cwd[4096];
	if (getcwd(cwd, sizeof(cwd)))
		printf("cwd %s\n", cwd);
	return 0;
}
