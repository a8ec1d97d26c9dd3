/* The process's effective uid and gid, asked of the kernel once per process
 * (issue 34: a run's supervisor asked 42 times; each system call exits to
 * the hypervisor on a virtual machine). */
#pragma once
#include <sys/types.h>

/* geteuid()/getegid(), remembered in memory a new process does not inherit
 * (MADV_WIPEONFORK: a child made by fork or clone, a user namespace's init
 * too, asks again). A process that changes its own identity (setresuid,
 * setns or unshare of a user namespace) calls ident_forget() after: the
 * next ask is the kernel's again. Without MADV_WIPEONFORK (before 4.14)
 * nothing is remembered. */
uid_t ident_euid(void);
gid_t ident_egid(void);
void ident_forget(void);
