#pragma once
#include <stdbool.h>

#define SERVE_USAGE                                                                                      \
	"usage: cordon serve (--socket PATH | --listen HOST:PORT --token-file F) --state-dir DIR\n"  \
	"       [--allow-uid UID]... [--socket-mode MODE] [--socket-group GROUP]\n"                      \
	"       [--ceiling FILE] [--max-sessions N] [--max-sessions-per-client N]\n"                     \
	"       [--idle-timeout DUR] [--session-timeout DUR] [--max-pause DUR] [--keep-runs N] [--keep-sessions N]\n"          \
	"       [--warm N [--warm-policy FILE]]\n"                                                      \
	"       [--max-runs N] [--max-runs-per-client N] [--tcp-uid UID]\n"                               \
	"       [--body-budget SIZE] [--header-timeout DUR] [--unauthenticated-connections N]\n"                               \
	"       [--connections-per-client N] [--body-timeout DUR]\n"                                     \
	"       [--tls-cert FILE --tls-key FILE | --insecure-tcp]\n"                                     \
	"Serve the HTTP/1.1 + JSON API (docs/api.md): sessions, exec, files, one-shot runs.\n"

int cmd_serve(int argc, char **argv);
