/* The run's own pty: allocation inside, input relay, cordon's terminal
 * (cordon-pty.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cordon-pty.h"

int pty_open(int *master, int *slave, const struct pty_winsize *ws, cordon_error *err)
{
	*master = *slave = -1;
	/* /dev/ptmx is the link to pts/ptmx of the run's own devpts instance. */
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (m < 0)
		return cordon_err_errno(err, "open /dev/ptmx (the run's pty)");
	int unlock = 0;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
		int e = errno;
		close(m);
		return cordon_err(err, e, "unlock the run's pty");
	}
	if (ws && ws->rows && ws->cols && pty_set_winsize(m, ws) < 0) {
		int e = errno;
		close(m);
		return cordon_err(err, e, "set the window size of the run's pty");
	}
	/* Through the master, not by name: the slave of this very master. */
	int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0) {
		int e = errno;
		close(m);
		return cordon_err(err, e, "open the slave of the run's pty");
	}
	*master = m;
	*slave = s;
	return 0;
}

int pty_attach_slave(int slave)
{
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
		return -1;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return -1;
	if (slave > 2)
		close(slave);
	return 0;
}

int pty_set_winsize(int master, const struct pty_winsize *ws)
{
	struct winsize w = {.ws_row = ws->rows, .ws_col = ws->cols};
	return ioctl(master, TIOCSWINSZ, &w);
}

bool pty_get_winsize(int fd, struct pty_winsize *ws)
{
	struct winsize w;
	if (fd < 0 || !isatty(fd) || ioctl(fd, TIOCGWINSZ, &w) < 0)
		return false;
	ws->rows = w.ws_row;
	ws->cols = w.ws_col;
	return true;
}

ssize_t pty_read(int master, void *p, size_t n)
{
	ssize_t r;
	do
		r = read(master, p, n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EIO)
		return 0;
	return r;
}

void pty_input_init(struct pty_input *in, int master)
{
	memset(in, 0, sizeof(*in));
	in->fd = master;
	in->line_start = true;
}

int pty_input_push(struct pty_input *in, const void *p, size_t n)
{
	if (in->eof) {
		errno = EPIPE;
		return -1;
	}
	if (in->gone || !n)
		return 0;
	/* Keystrokes can be passwords: the queue is wiped, never just freed. */
	if (in->off && in->off == in->pending.len) {
		explicit_bzero(in->pending.p, in->pending.len);
		in->pending.len = in->off = 0;
	}
	if (buf_append(&in->pending, p, n) < 0)
		return -1;
	in->line_start = ((const char *)p)[n - 1] == '\n';
	return 0;
}

int pty_input_eof(struct pty_input *in)
{
	if (in->eof)
		return 0;
	struct termios t;
	char veof = 4; /* ^D */
	bool canon = true;
	if (tcgetattr(in->fd, &t) == 0) {
		if (t.c_cc[VEOF] != _POSIX_VDISABLE)
			veof = (char)t.c_cc[VEOF];
		canon = t.c_lflag & ICANON;
	}
	char two[2] = {veof, veof};
	int r = pty_input_push(in, two, canon && !in->line_start ? 2 : 1);
	in->eof = true;
	return r;
}

int pty_input_flush(struct pty_input *in)
{
	while (!in->gone && in->off < in->pending.len) {
		ssize_t n = write(in->fd, in->pending.p + in->off, in->pending.len - in->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			in->gone = true;
			break;
		}
		in->off += (size_t)n;
	}
	if (in->pending.p)
		explicit_bzero(in->pending.p, in->pending.len);
	in->pending.len = in->off = 0;
	return in->gone ? -1 : 1;
}

bool pty_input_room(const struct pty_input *in)
{
	return !in->gone && !in->eof && in->pending.len - in->off < PTY_INPUT_MAX;
}

void pty_input_free(struct pty_input *in)
{
	buf_wipe(&in->pending);
	in->off = 0;
}

/* Raw mode on fd when it is a terminal and cordon is in its foreground
 * process group (never stopped by SIGTTOU); h->fd = -1 otherwise. */
static void pty_host_raw(struct pty_host *h, int fd)
{
	h->fd = -1;
	/* Only in the foreground: a background cordon changing the mode would
	 * be stopped (SIGTTOU), and the keys are not its to read. */
	if (!isatty(fd) || tcgetpgrp(fd) != getpgrp() || tcgetattr(fd, &h->saved) < 0)
		return;
	struct termios raw = h->saved;
	cfmakeraw(&raw);
	if (tcsetattr(fd, TCSADRAIN, &raw) == 0)
		h->fd = fd;
}

/* Put back the saved mode (idempotent). */
static void pty_host_restore(struct pty_host *h)
{
	if (h->fd < 0)
		return;
	tcsetattr(h->fd, TCSADRAIN, &h->saved);
	h->fd = -1;
}

static void ep_set(struct pty_relay *r, int fd, uint32_t events, bool *registered)
{
	struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)(uint32_t)fd};
	if (*registered && !events) {
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, fd, NULL);
		*registered = false;
	} else if (events) {
		if (epoll_ctl(r->epfd, *registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) == 0)
			*registered = true;
	}
}

void pty_relay_begin(struct pty_relay *r, int in_fd, int out_fd)
{
	memset(r, 0, sizeof(*r));
	r->in_fd = in_fd;
	r->master = -1;
	r->epfd = -1;
	r->host.fd = -1;
	r->winsrc = isatty(in_fd) ? in_fd : isatty(out_fd) ? out_fd : -1;
	if (!pty_get_winsize(r->winsrc, &r->ws) || !r->ws.rows || !r->ws.cols)
		r->ws = (struct pty_winsize){24, 80};
	pty_host_raw(&r->host, in_fd);
	/* A terminal cordon does not own the foreground of gives no input. */
	if (isatty(in_fd) && r->host.fd < 0)
		r->in_fd = -1;
}

/* Read what cordon's stdin has (one read) into the queue; at its end, VEOF. */
static void relay_read_input(struct pty_relay *r)
{
	char b[16384];
	ssize_t n;
	do
		n = read(r->in_fd, b, sizeof(b));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n > 0) {
		pty_input_push(&r->input, b, (size_t)n);
		explicit_bzero(b, (size_t)n);
		return;
	}
	/* End of input (or an error reading it): the run sees end of file. */
	if (r->in_poll)
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->in_fd, NULL);
	r->in_poll = false;
	r->in_fd = -1;
	pty_input_eof(&r->input);
}

/* Write the queue; watch the master for room, and stdin while there is room. */
static void relay_pump(struct pty_relay *r)
{
	for (;;) {
		int f = pty_input_flush(&r->input);
		/* A file or /dev/null (no epoll): read on while the master takes it. */
		if (f == 1 && r->in_fd >= 0 && !r->in_poll) {
			relay_read_input(r);
			continue;
		}
		bool want_out = f == 0;
		ep_set(r, r->master, want_out ? EPOLLOUT : 0, &r->out_watch);
		if (r->in_fd >= 0 && r->in_poll) {
			bool room = f >= 0 && pty_input_room(&r->input);
			if (room == r->in_paused) {
				struct epoll_event ev = {.events = room ? EPOLLIN : 0, .data.u64 = (uint64_t)(uint32_t)r->in_fd};
				epoll_ctl(r->epfd, EPOLL_CTL_MOD, r->in_fd, &ev);
				r->in_paused = !room;
			}
		}
		if (f < 0 && r->in_fd >= 0) {
			/* The run's side is closed: no more input is read. */
			if (r->in_poll)
				epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->in_fd, NULL);
			r->in_poll = false;
			r->in_fd = -1;
		}
		return;
	}
}

int pty_relay_attach(struct pty_relay *r, int epfd, int master)
{
	r->epfd = epfd;
	r->master = fcntl(master, F_DUPFD_CLOEXEC, 3);
	if (r->master < 0)
		return -1;
	pty_input_init(&r->input, r->master);
	if (r->in_fd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(uint32_t)r->in_fd};
		r->in_poll = epoll_ctl(epfd, EPOLL_CTL_ADD, r->in_fd, &ev) == 0;
		if (!r->in_poll && errno != EPERM)
			return -1;
	}
	/* The size may have changed since init set it. */
	pty_relay_winch(r);
	relay_pump(r);
	return 0;
}

bool pty_relay_event(struct pty_relay *r, int fd, uint32_t events)
{
	if (r->master < 0)
		return false;
	if (fd == r->master) {
		relay_pump(r);
		return true;
	}
	if (fd == r->in_fd && r->in_poll) {
		if (pty_input_room(&r->input))
			relay_read_input(r);
		relay_pump(r);
		return true;
	}
	return false;
}

void pty_relay_winch(struct pty_relay *r)
{
	struct pty_winsize ws;
	if (r->master >= 0 && pty_get_winsize(r->winsrc, &ws) && ws.rows && ws.cols)
		pty_set_winsize(r->master, &ws);
}

void pty_relay_end(struct pty_relay *r)
{
	pty_host_restore(&r->host);
	if (r->in_poll && r->epfd >= 0)
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->in_fd, NULL);
	r->in_poll = false;
	if (r->master >= 0) {
		if (r->out_watch && r->epfd >= 0)
			epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->master, NULL);
		r->out_watch = false;
		close(r->master);
		r->master = -1;
	}
	pty_input_free(&r->input);
}
