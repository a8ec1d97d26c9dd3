/* The supervisor's event loop (sup-loop.c). */
#ifndef CORDON_SUP_LOOP_H
#define CORDON_SUP_LOOP_H
#include "sup-state.h"

/* Arm a timerfd to fire once after ns (0: at once). */
void sup_arm_timer(int fd, uint64_t ns);
/* Add fd to the loop's epoll set, its data the fd's number. */
int sup_ep_add(int ep, int fd, uint32_t events);
/* Until init has exited and both output pipes are drained. */
int sup_event_loop(struct sup *s);

#endif
