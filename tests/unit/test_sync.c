/* The supervisor <-> init frames (lib/sync.c): sized to their content, typed,
 * and a frame that does not add up is refused. */
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sync.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* The raw size of the next frame on sock (peeked, left in place). */
static ssize_t frame_size(int sock)
{
	char buf[4096];
	return recv(sock, buf, sizeof(buf), MSG_PEEK | MSG_TRUNC);
}

static void test_error_and_path_round_trip_sized(void **state)
{
	int sv[2];
	pair(sv);
	cordon_error e = {13, "mount /x: permission denied"};
	assert_int_equal(sync_send(sv[0], MSG_ERROR, 0, &e, -1), 0);
	assert_int_equal(frame_size(sv[1]), 16 + (ssize_t)strlen(e.msg));
	struct msg m;
	assert_int_equal(sync_recv(sv[1], &m, NULL), 1);
	assert_int_equal(m.type, MSG_ERROR);
	assert_int_equal(m.err.code, 13);
	assert_string_equal(m.err.msg, e.msg);
	assert_int_equal(sync_send_path(sv[0], MSG_CGROUP, 2, "/sys/fs/cgroup/memory/cordon-1"), 0);
	assert_int_equal(frame_size(sv[1]), 16 + 30);
	assert_int_equal(sync_recv(sv[1], &m, NULL), 1);
	assert_int_equal(m.type, MSG_CGROUP);
	assert_int_equal(m.value, 2);
	assert_string_equal(m.path, "/sys/fs/cgroup/memory/cordon-1");
	/* no text: the header alone */
	assert_int_equal(sync_send(sv[0], MSG_EXIT, 256, NULL, -1), 0);
	assert_int_equal(frame_size(sv[1]), 16);
	assert_int_equal(sync_recv(sv[1], &m, NULL), 1);
	assert_int_equal(m.type, MSG_EXIT);
	assert_int_equal(m.value, 256);
	/* a path too long for a frame is not sent */
	char longp[2000];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(sync_send_path(sv[0], MSG_CGROUP, -1, longp), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	close(sv[0]);
	assert_int_equal(sync_recv(sv[1], &m, NULL), 0);
	close(sv[1]);
}

static void test_fd_passes(void **state)
{
	int sv[2];
	pair(sv);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sync_send(sv[0], MSG_LISTENER, 0, NULL, fd), 0);
	struct msg m;
	int got = -1;
	assert_int_equal(sync_recv(sv[1], &m, &got), 1);
	assert_int_equal(m.type, MSG_LISTENER);
	assert_true(got >= 0 && got != fd);
	close(got);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

static void raw(int sock, uint32_t type, uint32_t len_field, const char *text, size_t textlen)
{
	char buf[64];
	uint32_t h[4] = {type, 0, 0, len_field};
	memcpy(buf, h, sizeof(h));
	memcpy(buf + sizeof(h), text, textlen);
	assert_int_equal(send(sock, buf, sizeof(h) + textlen, 0), (ssize_t)(sizeof(h) + textlen));
}

static void test_malformed_frames_refused(void **state)
{
	int sv[2];
	pair(sv);
	struct msg m;
	assert_int_equal(send(sv[0], "abc", 3, 0), 3); /* shorter than a header */
	assert_int_equal(sync_recv(sv[1], &m, NULL), -1);
	raw(sv[0], MSG_ERROR, 10, "abc", 3); /* length says more than came */
	assert_int_equal(sync_recv(sv[1], &m, NULL), -1);
	raw(sv[0], MSG_EXIT, 3, "abc", 3); /* a text where the type has none */
	assert_int_equal(sync_recv(sv[1], &m, NULL), -1);
	raw(sv[0], MSG_CGROUP, 3, "a\0c", 3); /* a NUL inside a path */
	assert_int_equal(sync_recv(sv[1], &m, NULL), -1);
	raw(sv[0], MSG_CGROUP, 3, "abc", 3); /* and a good one after them */
	assert_int_equal(sync_recv(sv[1], &m, NULL), 1);
	assert_string_equal(m.path, "abc");
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_and_path_round_trip_sized),
		cmocka_unit_test(test_fd_passes),
		cmocka_unit_test(test_malformed_frames_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
