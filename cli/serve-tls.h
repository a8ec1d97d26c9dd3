/* cordon serve over TLS (--tls-cert, --tls-key) and the rule for TCP in
 * clear (--insecure-tcp): serve-tls.c, docs/serve-cluster.md. */
#pragma once
#include <stdbool.h>
#include <microhttpd.h>

/* --tls-cert FILE / --tls-key FILE: 1 taken (the file read: PEM; a key
 * no one but its owner may read), 0 not one of them, -1 bad (a line
 * printed). */
int tls_option(const char *o, const char *v);
/* --insecure-tcp: --listen on an address other than loopback in clear. */
void tls_insecure(void);
/* The options together, listen being --listen or NULL: 0, or -1 and a
 * line printed (TLS without --listen, a cert without its key, a listener
 * beyond loopback in clear without --insecure-tcp). */
int tls_check(const char *listen);
bool tls_on(void);
/* The MHD options of TLS into opt (room items at most): how many (0
 * without TLS), or -1 when there is no room. */
int tls_mhd_options(struct MHD_OptionItem *opt, int room);
