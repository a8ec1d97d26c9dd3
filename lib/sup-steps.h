/* The supervisor's steps between the syncs (sup-steps.c). */
#ifndef CORDON_SUP_STEPS_H
#define CORDON_SUP_STEPS_H
#include "sup-state.h"

int sup_send_idmapped_trees(struct sup *s, cordon_error *err);
int sup_send_cgroup_view(struct sup *s, cordon_error *err);
/* v1: the run's cgroup, one "tasks" file per hierarchy, for init to move
 * itself in (MSG_CGJOIN). */
int sup_send_cgroup_join(struct sup *s, cordon_error *err);
int sup_keep_pins(struct sup *s, cordon_error *err);

#endif
