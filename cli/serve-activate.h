/* systemd's socket activation for cordon serve (serve-activate.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define SERVE_NOT_ACTIVATED (-2)

/* The listening socket systemd passed (descriptor 3), checked against
 * --socket PATH (socket_path) or --listen HOST:PORT (listen_spec);
 * SERVE_NOT_ACTIVATED when none was passed to this process; -1 (said on
 * stderr in one line) when what was passed does not fit. */
int serve_activated_socket(const char *socket_path, const char *listen_spec);
