/* The supervisor's finishing (sup-finish.c). */
#ifndef CORDON_SUP_FINISH_H
#define CORDON_SUP_FINISH_H
#include "sup-state.h"

/* Usage and the outcome, and the output streams' totals. */
void sup_finish_usage(struct sup *s);
/* The outputs (a change set applied if apply), the sweep, the give-back. */
void sup_finish_outputs(struct sup *s, bool apply);
/* Everything the run held, released. */
void sup_cleanup(struct sup *s);

#endif
