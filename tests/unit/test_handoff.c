/* The transparent path's hand-off table (lib/sup-handoff.c): a connection
 * to the hand-off listener is taken for name:port only when it comes from
 * the very socket the supervisor announced (outside review, attack9). */
#include "unit.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sup-handoff.h"

/* A socket bound to 127.0.0.1:port (0: any); reuse: with SO_REUSEADDR
 * and SO_REUSEPORT, as another process would try. */
static int bound(uint16_t port, bool reuse, uint16_t *got)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	int one = 1;
	if (reuse) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	}
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(s);
		return -1;
	}
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
	*got = ntohs(a.sin_port);
	return s;
}

/* The supervisor's socket was bound and announced, but its connect never
 * reached the listener (the backlog full: the SYN dropped) and the run
 * closed its copy. Another process of the host binds 127.0.0.1:src and
 * connects from it: it must not claim name:port. */
static void test_announced_port_is_held_until_claimed(void **state)
{
	(void)state;
	struct handoff *h = NULL;
	cordon_error err = {0};
	assert_int_equal(handoff_new(&h, &err), 0);
	uint16_t src = 0;
	int s = bound(0, false, &src);
	assert_true(s >= 0);
	assert_true(handoff_announce(h, s, src, "secret.test", 443));
	close(s); /* the run let go of its socket */
	uint16_t again = 0;
	int spoof = bound(src, true, &again);
	if (spoof >= 0) {
		struct sockaddr_in l = handoff_addr(h);
		assert_int_equal(connect(spoof, (struct sockaddr *)&l, sizeof(l)), 0);
		struct sockaddr_in peer = {0};
		socklen_t pl = sizeof(peer);
		int a = accept4(handoff_fd(h), (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
		assert_true(a >= 0);
		char name[256];
		uint16_t port = 0;
		bool claimed = handoff_claim(h, ntohs(peer.sin_port), name, sizeof(name), &port);
		close(a);
		close(spoof);
		handoff_free(h);
		fail_msg("another socket took the announced 127.0.0.1:%u%s", src, claimed ? " and claimed secret.test:443" : "");
	}
	/* Claimed (or withdrawn): the address is let go. */
	char name[256];
	uint16_t port = 0;
	assert_true(handoff_claim(h, src, name, sizeof(name), &port));
	assert_string_equal(name, "secret.test");
	assert_int_equal(port, 443);
	assert_false(handoff_claim(h, src, name, sizeof(name), &port));
	handoff_free(h);
}

/* A full table refuses, and frees nothing it was not given. */
static void test_table_is_bounded(void **state)
{
	(void)state;
	struct handoff *h = NULL;
	cordon_error err = {0};
	assert_int_equal(handoff_new(&h, &err), 0);
	int s[HANDOFF_MAX + 1];
	uint16_t src[HANDOFF_MAX + 1] = {0};
	for (size_t i = 0; i <= HANDOFF_MAX; i++) {
		s[i] = bound(0, false, &src[i]);
		assert_true(s[i] >= 0);
		assert_int_equal(handoff_announce(h, s[i], src[i], "a.test", 80), i < HANDOFF_MAX);
	}
	handoff_withdraw(h, src[0]);
	assert_true(handoff_announce(h, s[HANDOFF_MAX], src[HANDOFF_MAX], "a.test", 80));
	for (size_t i = 0; i <= HANDOFF_MAX; i++)
		close(s[i]);
	handoff_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_announced_port_is_held_until_claimed),
		cmocka_unit_test(test_table_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
