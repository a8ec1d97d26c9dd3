/* Pause and resume of a session (POST /v1/sessions/{id}/pause and
 * .../resume, docs/api.md): every process of the session frozen by the
 * cgroup freezer (session-cg.c), and the session's clocks stopped while it
 * is. The wall-time limit, the idle timeout and each running exec's
 * timeout keep their time left and go on from it at the resume; each pause
 * is kept for the report (session.paused). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include "session-pause.h"
#include "clock.h"
#include "error.h"
#include "json.h"
#include "session-cg.h"
#include "session-stream.h"
#include "session-util.h"
#include "session-worker.h"

/* How long a pause (or resume) waits for the kernel to say every process
 * is frozen (thawed) before it answers; past it the answer says
 * "frozen": false and the freezer goes on. */
#define FREEZE_WAIT_MS 2000

/* The time left on a timerfd (0: not armed, or expired). */
static uint64_t timer_left(int fd)
{
	struct itimerspec its;
	if (fd < 0 || timerfd_gettime(fd, &its) < 0)
		return 0;
	return (uint64_t)its.it_value.tv_sec * 1000000000ULL + (uint64_t)its.it_value.tv_nsec;
}

/* Armed for ns (0: stopped; either way an expiry not yet read is gone). */
static void timer_set(int fd, uint64_t ns)
{
	if (fd < 0)
		return;
	struct itimerspec its = {{0, 0}, {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)}};
	timerfd_settime(fd, 0, &its, NULL);
}

/* Where the session's own times count from: the moment it was handed to
 * its client (ready, or taken from the warm pool). */
static uint64_t base_ns(const struct sx *s)
{
	return s->t_ready + s->pool_ns;
}

static void reply_state(struct sx *s, int reply, bool frozen)
{
	char j[256];
	uint64_t total = s->paused_ns, now = mono_ns();
	if (s->paused)
		total += now > s->pause_t0 ? now - s->pause_t0 : 0;
	snprintf(j, sizeof(j), "{\"id\":\"%s\",\"state\":\"%s\",\"frozen\":%s,\"paused_seconds\":%.6f}", s->id,
		 s->paused ? "paused" : "running", frozen ? "true" : "false", (double)total / 1e9);
	sx_reply_json(reply, j);
}

/* The pause's bound (--max-pause): armed while it lasts; its expiry ends
 * the session (session.c, K_PAUSE). False: no timer could be had, and the
 * session is not paused (an unbounded pause is never granted). */
static bool pause_bound(struct sx *s, bool on)
{
	if (!s->max_pause_ns)
		return true;
	if (s->pause_timer < 0) {
		if (!on)
			return true;
		s->pause_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(K_PAUSE, 0)};
		if (s->pause_timer < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->pause_timer, &ev) < 0) {
			sx_close_fd(&s->pause_timer);
			return false;
		}
	}
	timer_set(s->pause_timer, on ? s->max_pause_ns : 0);
	return true;
}

static void pause_closed(struct sx *s)
{
	uint64_t now = mono_ns(), t0 = s->pause_t0;
	uint64_t d = now > t0 ? now - t0 : 0;
	s->paused_ns += d;
	if (s->pause_listed && s->npauses)
		s->pauses[s->npauses - 1].end = now;
	for (size_t i = 0; i < s->nex; i++)
		if (s->ex[i].running)
			s->ex[i].paused_ns += d;
	s->paused = false;
	pause_bound(s, false);
}

void sx_do_pause(struct sx *s, int reply)
{
	if (s->paused) {
		/* Idempotent: the pause under way. */
		reply_state(s, reply, sxcg_frozen());
		return;
	}
	if (!sxcg_can_freeze()) {
		sx_reply_error(reply, 409, "the session cannot be paused: it has no freezer cgroup on this host (cgroup v2's cgroup.freeze, or the v1 freezer hierarchy)");
		return;
	}
	/* Its clocks stop first: the time the freeze takes is not counted. A
	 * wall time already up ends the session (its event is on its way);
	 * an exec's timeout already up ends that exec now, as its event would
	 * have (frozen, it would end only at the resume). */
	uint64_t wall = s->wall_timer >= 0 && s->pol->limits[LIM_WALL].set ? timer_left(s->wall_timer) : 0;
	if (s->wall_timer >= 0 && s->pol->limits[LIM_WALL].set && wall == 0) {
		sx_reply_error(reply, 409, "the session's wall time is up: it is ending");
		return;
	}
	for (size_t i = 0; i < s->nex; i++) {
		struct sx_exec *x = &s->ex[i];
		x->timer_left = 0;
		if (!x->running || x->timer < 0 || x->forced)
			continue;
		x->timer_left = timer_left(x->timer);
		if (x->timer_left == 0)
			sx_signal_exec(s, x, SIGKILL, "timeout");
		timer_set(x->timer, 0);
	}
	if (!pause_bound(s, true)) {
		for (size_t i = 0; i < s->nex; i++)
			if (s->ex[i].running && s->ex[i].timer_left)
				timer_set(s->ex[i].timer, s->ex[i].timer_left);
		sx_reply_error(reply, 500, "the pause's bound (--max-pause) could not be armed: %s", strerror(errno));
		return;
	}
	timer_set(s->wall_timer, 0);
	timer_set(s->idle, 0);
	cordon_error e = {0};
	bool frozen = false;
	if (sxcg_freeze(true, FREEZE_WAIT_MS, &frozen, &e) < 0) {
		/* Not paused: its clocks go on from where they stopped. */
		sxcg_thaw();
		pause_bound(s, false);
		timer_set(s->wall_timer, wall);
		for (size_t i = 0; i < s->nex; i++)
			if (s->ex[i].running && s->ex[i].timer_left)
				timer_set(s->ex[i].timer, s->ex[i].timer_left);
		sx_arm_idle(s);
		sx_reply_error(reply, 500, "%s", e.msg);
		return;
	}
	s->paused = true;
	s->wall_left = wall;
	s->pause_t0 = mono_ns();
	s->pause_listed = s->npauses < SX_PAUSES_MAX;
	if (s->pause_listed)
		s->pauses[s->npauses++] = (struct sx_pause_iv){s->pause_t0, 0};
	else
		s->pauses_omitted++;
	reply_state(s, reply, frozen);
}

void sx_do_resume(struct sx *s, int reply)
{
	if (!s->paused) {
		reply_state(s, reply, false);
		return;
	}
	cordon_error e = {0};
	bool thawed = false;
	if (sxcg_freeze(false, FREEZE_WAIT_MS, &thawed, &e) < 0) {
		sx_reply_error(reply, 500, "%s", e.msg);
		return;
	}
	pause_closed(s);
	if (s->wall_left)
		timer_set(s->wall_timer, s->wall_left);
	for (size_t i = 0; i < s->nex; i++)
		if (s->ex[i].running && s->ex[i].timer_left)
			timer_set(s->ex[i].timer, s->ex[i].timer_left);
	sx_arm_idle(s);
	reply_state(s, reply, false);
}

void sx_pause_end(struct sx *s)
{
	if (!s->paused)
		return;
	sxcg_thaw();
	pause_closed(s);
}

void sx_pauses_json(const struct sx *s, buf *b)
{
	uint64_t b0 = base_ns(s), now = mono_ns(), total = s->paused_ns;
	if (s->paused)
		total += now > s->pause_t0 ? now - s->pause_t0 : 0;
	buf_printf(b, "\"paused\": [");
	for (size_t i = 0; i < s->npauses; i++) {
		const struct sx_pause_iv *p = &s->pauses[i];
		uint64_t st = p->start > b0 ? p->start - b0 : 0, en = p->end ? p->end : now;
		en = en > b0 ? en - b0 : 0;
		buf_printf(b, "%s{\"start\": %.6f, \"end\": %.6f}", i ? ", " : "", (double)st / 1e9, (double)en / 1e9);
	}
	buf_printf(b, "], \"paused_seconds\": %.6f, ", (double)total / 1e9);
	if (s->pauses_omitted)
		buf_printf(b, "\"paused_omitted\": %zu, ", s->pauses_omitted);
}
