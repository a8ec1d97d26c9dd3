/* A pty of the run's own (cordon run --pty; cordon serve's pty execs).
 * (Named cordon-pty.h: lib/ is on the include path, and a pty.h there would
 * shadow the system's <pty.h>.)
 *
 * The pty is allocated inside the sandbox, in the run's private devpts
 * instance (mounts.c), so the run never holds a terminal of the host. Three
 * parts, usable separately:
 *   inside    pty_open (init, after pivot_root), pty_attach_slave (the
 *             command, after fork, before exec);
 *   input     struct pty_input: bytes queued for the master, written as it
 *             accepts them (non-blocking), end of input as VEOF;
 *   host      struct pty_host: cordon's own terminal in raw mode, restored;
 *             its window size.
 * struct pty_relay ties them to an epoll loop for `cordon run --pty`; a
 * server drives pty_input and pty_read from its own loop instead. Output of
 * the master is read like a pipe (stream.c treats EIO, the master's end of
 * input once every slave is closed, as end of file; pty_read does the same). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>
#include "error.h"
#include "strv.h"

struct pty_winsize {
	unsigned short rows, cols; /* 0 = leave the kernel's default */
};

/* Inside the sandbox, with the run's own devpts at /dev/pts: a new pty.
 * *master: O_RDWR | O_NONBLOCK | O_CLOEXEC; *slave: opened through the master
 * (TIOCGPTPEER, no path lookup), O_NOCTTY | O_CLOEXEC. ws is set on it when
 * non-zero. Returns 0, or -1 with err set. */
int pty_open(int *master, int *slave, const struct pty_winsize *ws, cordon_error *err);

/* In the command's process, after fork and before exec: a new session whose
 * controlling terminal is slave, and slave on fds 0, 1 and 2. Only
 * async-signal-safe calls. Returns 0 or -1 (errno set). */
int pty_attach_slave(int slave);

/* TIOCSWINSZ on a master (the kernel then signals SIGWINCH to the pty's
 * foreground process group). Returns 0 or -1 (errno set). */
int pty_set_winsize(int master, const struct pty_winsize *ws);
/* The window size of terminal fd; false when fd is not a terminal. */
bool pty_get_winsize(int fd, struct pty_winsize *ws);

/* Read from a master: bytes read; 0 at end (EIO: every slave is closed);
 * -1 with errno EAGAIN when nothing is there yet, or another error. */
ssize_t pty_read(int master, void *p, size_t n);

/* Input for the master, queued and written without blocking. */
#define PTY_INPUT_MAX (64 * 1024) /* queued bytes at most; read no more input beyond */
struct pty_input {
	int fd;          /* the master (not owned) */
	buf pending;
	size_t off;
	bool eof;        /* end of input queued (VEOF) */
	bool gone;       /* the master refused (EIO: the run's side is closed) */
	bool line_start; /* the last byte queued was a newline (or none yet) */
};
void pty_input_init(struct pty_input *in, int master);
/* Queue n bytes. Returns 0, or -1 (out of memory, or input after its end). */
int pty_input_push(struct pty_input *in, const void *p, size_t n);
/* The end of input, as a terminal user types it: VEOF (twice after a
 * partial line in canonical mode, the first ends the line). */
int pty_input_eof(struct pty_input *in);
/* Write what is queued: 1 = all written, 0 = the master is full (wait for
 * EPOLLOUT), -1 = the master refused it (the rest is dropped). A master
 * whose slaves are all closed still takes input: its end shows on the
 * read side (pty_read returns 0). */
int pty_input_flush(struct pty_input *in);
/* More input may be queued (below PTY_INPUT_MAX). */
bool pty_input_room(const struct pty_input *in);
void pty_input_free(struct pty_input *in);

/* cordon's own terminal. */
struct pty_host {
	int fd;          /* the terminal put in raw mode, or -1 */
	struct termios saved;
};

/* The relay of `cordon run --pty`, in the supervisor's epoll loop. Its fds
 * are registered with data.u64 = the fd number, as run.c does. */
struct pty_relay {
	int in_fd;        /* cordon's stdin, or -1 once it ended (not owned) */
	bool in_poll;     /* in_fd is in the epoll set (epoll refuses files) */
	bool in_paused;   /* input queue full: in_fd not watched */
	int master;       /* our own dup of the master, for input; -1 before it came */
	bool out_watch;   /* master registered for EPOLLOUT */
	int winsrc;       /* the terminal whose size the run follows, or -1 */
	struct pty_winsize ws; /* the size at start */
	struct pty_input input;
	struct pty_host host;
	int epfd;
};
/* Before the run: cordon's terminal (stdin, else stdout) gives the initial
 * window size (24x80 when there is none); stdin, when it is a terminal in
 * the foreground, goes raw. */
void pty_relay_begin(struct pty_relay *r, int in_fd, int out_fd);
/* The master arrived (MSG_PTY): watch stdin, write input to a dup of it.
 * Returns 0 or -1 (errno set). */
int pty_relay_attach(struct pty_relay *r, int epfd, int master);
/* fd is one of the relay's: handle the event and return true. */
bool pty_relay_event(struct pty_relay *r, int fd, uint32_t events);
/* SIGWINCH: the terminal's new size to the run's pty. */
void pty_relay_winch(struct pty_relay *r);
/* After the run: stop relaying, restore the terminal (every exit path). */
void pty_relay_end(struct pty_relay *r);
