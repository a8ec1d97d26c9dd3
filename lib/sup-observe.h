/* What the seccomp observer's parts share (internal to sup-observe*.c): the
 * lifecycle and each call's handling are sup-observe.c's; a call's paths
 * sup-observe-path.c's, its sockets sup-observe-net.c's, denials on record
 * sup-observe-deny.c's, each declared in a header of its own name. */
#pragma once

/* How a call writes its path: never, always, by its open flags or how. */
enum wmode { W_NO, W_YES, W_OPENFLAGS, W_OPENHOW };
