/* The command's half of a fork in the sandbox (lib/exec.c): shared by
 * init's one command (child-init.c) and a session's execs (session-agent.c). */
#pragma once
#include <stdint.h>
#include <sys/types.h>
#include "sandbox.h"

/* stdio (outw, errw; or slave, a pty's, when >= 0), the signals init
 * ignores (ignored, bit sig-1) back to default, the status pipe's write end
 * at fd 3 (close-on-exec), then execve of sp->argv with sp->envp (a PATH
 * search with the run's PATH). On failure the errno goes to the status
 * pipe (exec_status_fail) and the process exits 127. */
__attribute__((noreturn)) void exec_command(const struct sandbox_spec *sp, int outw, int errw,
					    int status_fd, uint64_t ignored, int slave);
/* CLOCK_MONOTONIC just before exec_command's (last) execve, written in the
 * exec's process: seen by a parent that shares its memory until the execve
 * (the session agent's CLONE_VM | CLONE_VFORK), in nanoseconds. */
extern uint64_t exec_command_stamp;
/* The exec-status pipe's one writer: err to fd, then _exit(127). */
__attribute__((noreturn)) void exec_status_fail(int fd, int err);
/* Its reader (the parent, its write end closed): 0 when the pipe closed
 * empty (the execve succeeded), else the errno of the failure. */
int exec_status_read(int fd);
/* A ptrace stop init never asked for: let the tracee go. */
void release_tracee(pid_t pid, int sig);
