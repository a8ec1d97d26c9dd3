/* The sandbox's PID 1 (lib/child-init.c): the child's enforcement order. */
#pragma once
#include "sandbox.h"

/* Runs after clone3 in the child; never returns. sock: the sync socket;
 * outw, errw: the command's stdout and stderr pipes. */
__attribute__((noreturn)) void sandbox_init_main(const struct sandbox_spec *spec, int sock,
						  int outw, int errw);
