/* tests/integration/tegclients.sh: musl's resolver through the transparent
 * path: getaddrinfo + connect + one line back, for each family. */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int ask(const char *name, const char *port, int family)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *ai;
	int e = getaddrinfo(name, port, &hints, &ai);
	if (e) {
		printf("%s %s\n", family == AF_INET ? "v4" : "v6", gai_strerror(e));
		return 1;
	}
	char host[64] = "";
	getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	int s = socket(ai->ai_family, SOCK_STREAM, 0);
	if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen) < 0) {
		printf("%s %s connect %m\n", family == AF_INET ? "v4" : "v6", host);
		freeaddrinfo(ai);
		return 1;
	}
	freeaddrinfo(ai);
	char line[64];
	ssize_t n = 0, r;
	if (write(s, "ping\n", 5) != 5)
		return 1;
	while (n < (ssize_t)sizeof(line) - 1 && (r = read(s, line + n, 1)) == 1 && line[n] != '\n')
		n++;
	line[n] = 0;
	close(s);
	printf("%s %.6s %s\n", family == AF_INET ? "v4" : "v6", host, line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int rc = ask(argv[1], argv[2], AF_INET) | ask(argv[1], argv[2], AF_INET6);
	struct addrinfo *ai;
	int e = getaddrinfo(argv[3], argv[2], NULL, &ai);
	printf("undeclared %s\n", e ? gai_strerror(e) : "resolved");
	if (!e)
		freeaddrinfo(ai);
	return rc;
}
