/* The proxy tests' shared fixture (test_proxy.c, test_pxrule.c): a
 * compiled redactor of given secrets, and a connection of the proxy's
 * request reader (pxhttp) with its report, rules, one injected secret and
 * the two directions' buffers, set up and torn down around a test by
 * cmocka (PXFIX_TEST(test) in the table; the test's state, *st, is the
 * struct pxfix). */
#pragma once
#include "unit.h"
#include "proxy.h"
#include "pxparse.h"
#include "pxhttp.h"
#include "pxrule.h"
#include "redact.h"
#include "report.h"

/* A redactor of the NAME, VALUE pairs that follow (NULL ends them),
 * compiled; literal: redactor_literal first (each value becomes its NAME,
 * as the proxy's response filter has it, not "[REDACTED:NAME]"). */
redactor *pxfix_redactor(int literal, ...);

/* What b holds, NUL-terminated (one byte more in b->len). */
const char *pxfix_str(buf *b);

/* The secret every injecting test uses: TOK, placeholder ph_0123, value
 * s3cr3t-value, injected in headers and the query for api.example:443. */
#define PXFIX_PLACEHOLDER "ph_0123"
#define PXFIX_VALUE "s3cr3t-value"

struct pxfix {
	struct run_report rep;
	struct net_rules rs;   /* empty: a test adds its rules (pxfix_allow) */
	strv hosts;            /* the secret's: api.example:443 */
	struct pxhttp_secret sec;
	redactor *echo;        /* sec's value to its placeholder */
	struct pxhttp *h;      /* pxfix_open's connection */
	buf up, down;
};

int pxfix_setup(void **st);
int pxfix_teardown(void **st);
/* A test of the table run with this fixture around it. */
#define PXFIX_TEST(t) cmocka_unit_test_setup_teardown(t, pxfix_setup, pxfix_teardown)

/* A rule admitting HOST:PORT with no method or path restriction. */
void pxfix_allow(struct pxfix *f, const char *target);

/* What pxfix_open sets on the connection beyond pxhttp_init. */
enum {
	PXF_TLS = 1,    /* h->tls */
	PXF_SECRET = 2, /* h->sec = &f->sec, h->nsec = 1 */
	PXF_ECHO = 4,   /* h->echo = f->echo */
	PXF_INJECT = PXF_TLS | PXF_SECRET | PXF_ECHO,
};

/* pxhttp_init of f->h for HOST:PORT named TARGET (FORWARD: a forward
 * proxy's request, not a tunnel), the PXF_* of how, both buffers emptied. */
struct pxhttp *pxfix_open_at(struct pxfix *f, const char *host, uint16_t port, const char *target, bool forward,
			     unsigned how);
/* The same for api.example:443 through a tunnel. */
struct pxhttp *pxfix_open(struct pxfix *f, unsigned how);

/* The secret goes to TARGET alone (f->hosts replaced). */
void pxfix_scope(struct pxfix *f, const char *target);

/* proxy_parse_request of the n bytes at s (pxfix_rc_str: of the string),
 * its result alone: what it parsed is freed. */
int pxfix_rc(const char *s, size_t n);
int pxfix_rc_str(const char *s);
