/* The seccomp layer's tables (lib/seccomp-policy.c builds the filters from them):
 * the default deny list, the namespace flags of clone/unshare, the
 * personality bits that weaken mitigations, the calls that can set a
 * privilege bit. Data only. */
#include <linux/capability.h>
#include <linux/personality.h>
#include <sched.h>
#include <stddef.h>
#include "seccomp-policy.h"
#include "seccomp-tables.h"

/* Denied outright (with the reasons in docs/seccomp.md). */
const char *const seccomp_default_deny[] = {
	/* namespaces and the mount table */
	"setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr", "statmount", "listmount",
	/* kernel attack surface untrusted code does not need */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "open_by_handle_at", "fanotify_init",
	"lookup_dcookie", "modify_ldt", "iopl", "ioperm", "uselib", "ustat", "sysfs",
	/* host-wide state */
	"acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime",
	"quotactl", "quotactl_fd", "syslog", "vhangup", "sethostname", "setdomainname",
	"lsm_set_self_attr",
	NULL,
};

const struct seccomp_ns_flag seccomp_ns_flags[SECCOMP_N_NS_FLAGS] = {
	{CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWPID, "CLONE_NEWPID"},
	{CLONE_NEWNET, "CLONE_NEWNET"}, {CLONE_NEWIPC, "CLONE_NEWIPC"}, {CLONE_NEWUTS, "CLONE_NEWUTS"},
	{CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {0x00000080 /* CLONE_NEWTIME */, "CLONE_NEWTIME"},
};

/* personality(2) bits that weaken the process's own exploit mitigations.
 * The query value 0xffffffff has bit 31 set, which no real persona uses, so
 * "bit set and bit 31 clear" is one masked comparison. */
const unsigned long seccomp_bad_persona[SECCOMP_N_BAD_PERSONA] = {
	ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO, READ_IMPLIES_EXEC, ADDR_COMPAT_LAYOUT,
	ADDR_LIMIT_32BIT, ADDR_LIMIT_3GB,
};

/* The calls that can put a privilege bit (S_ISUID, S_ISGID) on a file, with
 * where their mode is. The mode is a plain integer, so the filter sees it.
 * No syscalls.allow entry lifts these rules: a file the run leaves with such
 * a bit belongs to the host (the idmapped workspace) and is a way to its root. */
const struct priv_call seccomp_priv_calls[SECCOMP_N_PRIV_CALLS] = {
	{"chmod", 1, -1, -1, 0, -1, true},
	{"fchmod", 1, -1, 0, -1, -1, true},
	{"fchmodat", 2, -1, 0, 1, -1, true},
	{"fchmodat2", 2, -1, 0, 1, 3, true},
	{"open", 2, 1, -1, 0, -1, false},
	{"openat", 3, 2, 0, 1, -1, false},
	{"creat", 1, -1, -1, 0, -1, false},
	{"mknod", 1, -1, -1, 0, -1, false},
	{"mknodat", 2, -1, 0, 1, -1, false},
};

/* The calls that write an xattr whose size is a plain argument (the fourth):
 * a file capability (security.capability) is written through them, and the
 * kernel takes only a value of exactly XATTR_CAPS_SZ_2 or XATTR_CAPS_SZ_3
 * bytes (struct vfs_cap_data, vfs_ns_cap_data: cap_convert_nscap refuses
 * any other size). The name is in memory, out of a filter's reach, so
 * these sizes are refused whatever the name (cordon-oci, docs/oci.md). */
const char *const seccomp_fcap_calls[SECCOMP_N_FCAP_CALLS] = {"setxattr", "lsetxattr", "fsetxattr"};
const unsigned long seccomp_fcap_sizes[SECCOMP_N_FCAP_SIZES] = {XATTR_CAPS_SZ_2, XATTR_CAPS_SZ_3};
