/* The remembered identity (lib/ident.c): a child, a user namespace's first
 * process too, asks the kernel again (the memory is wiped at fork), and a
 * process that changes its identity and forgets asks again. */
#include "unit.h"
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ident.h"

/* The child's exit status: 0 when check() held there. */
static int in_child(unsigned long flags, int (*check)(void))
{
	pid_t p = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (p == 0)
		_exit(check());
	if (p < 0)
		return -1;
	int st;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* In a new user namespace with no map, the euid is the overflow uid. */
static int overflow_uid(void)
{
	return ident_euid() == (uid_t)geteuid() && ident_euid() != 0 ? 0 : 1;
}

static void test_a_new_user_namespace_asks_again(void **state)
{
	uid_t me = ident_euid();
	assert_int_equal(me, geteuid());
	if (me != 0)
		skip(); /* the overflow uid differs from root's only */
	int r = in_child(CLONE_NEWUSER, overflow_uid);
	if (r < 0)
		skip(); /* no user namespaces here */
	assert_int_equal(r, 0);
	assert_int_equal(ident_euid(), 0);
}

static int after_setresuid(void)
{
	(void)ident_euid(); /* remembered: 0 */
	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return 2;
	ident_forget();
	return ident_euid() == 65534 && ident_egid() == 65534 ? 0 : 1;
}

static void test_forget_after_an_identity_change(void **state)
{
	if (ident_euid() != 0)
		skip(); /* setresuid needs root */
	assert_int_equal(in_child(0, after_setresuid), 0);
	assert_int_equal(ident_euid(), 0);
	assert_int_equal(ident_egid(), getegid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_user_namespace_asks_again),
		cmocka_unit_test(test_forget_after_an_identity_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
