/* Init of a session (lib/session-agent.c). */
#pragma once
#include <stdint.h>
#include "sandbox.h"

/* Every layer applied, init starts commands on request from the supervisor
 * until told to end; never returns. */
__attribute__((noreturn)) void session_agent_main(const struct sandbox_spec *sp, int sock, int outw,
						   int errw, uint64_t ignored);
