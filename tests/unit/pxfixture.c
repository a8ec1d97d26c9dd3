/* The proxy tests' shared fixture (pxfixture.h). */
#include <stdio.h>
#include "pxfixture.h"

redactor *pxfix_redactor(int literal, ...)
{
	cordon_error err = {0};
	redactor *r = redactor_new();
	assert_non_null(r);
	if (literal)
		redactor_literal(r);
	va_list ap;
	va_start(ap, literal);
	for (const char *name; (name = va_arg(ap, const char *));) {
		const char *value = va_arg(ap, const char *);
		assert_int_equal(redactor_add_secret(r, name, (const uint8_t *)value, strlen(value), &err), 0);
	}
	va_end(ap);
	assert_int_equal(redactor_compile(r, &err), 0);
	return r;
}

const char *pxfix_str(buf *b)
{
	assert_int_equal(buf_append(b, "", 1), 0);
	return b->p;
}

int pxfix_setup(void **st)
{
	struct pxfix *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	report_init(&f->rep);
	strv_push(&f->hosts, "api.example:443");
	f->sec = (struct pxhttp_secret){"TOK", PXFIX_PLACEHOLDER, (const uint8_t *)PXFIX_VALUE,
					strlen(PXFIX_VALUE), &f->hosts, true, true, false, 0};
	f->echo = pxfix_redactor(true, PXFIX_PLACEHOLDER, PXFIX_VALUE, NULL);
	f->h = malloc(sizeof(*f->h));
	assert_non_null(f->h);
	*st = f;
	return 0;
}

int pxfix_teardown(void **st)
{
	struct pxfix *f = *st;
	free(f->h);
	buf_free(&f->up);
	buf_free(&f->down);
	strv_free(&f->hosts);
	pxrule_free(&f->rs);
	report_free(&f->rep);
	redactor_free(f->echo);
	free(f);
	return 0;
}

void pxfix_allow(struct pxfix *f, const char *target)
{
	cordon_error err = {0};
	assert_int_equal(pxrule_add(&f->rs, target, NULL, NULL, false, &err), 0);
}

struct pxhttp *pxfix_open_at(struct pxfix *f, const char *host, uint16_t port, const char *target, bool forward,
			     unsigned how)
{
	struct pxhttp *h = f->h;
	pxhttp_init(h, &f->rs, &f->rep, host, port, target, forward);
	if (how & PXF_TLS)
		h->tls = true;
	if (how & PXF_SECRET)
		h->sec = &f->sec, h->nsec = 1;
	if (how & PXF_ECHO)
		h->echo = f->echo;
	f->up.len = f->down.len = 0;
	return h;
}

struct pxhttp *pxfix_open(struct pxfix *f, unsigned how)
{
	return pxfix_open_at(f, "api.example", 443, "api.example:443", false, how);
}

void pxfix_scope(struct pxfix *f, const char *target)
{
	strv_free(&f->hosts);
	strv_push(&f->hosts, target);
}

int pxfix_rc(const char *s, size_t n)
{
	struct proxy_request r;
	int rc = proxy_parse_request(s, n, &r);
	buf_free(&r.upstream);
	return rc;
}

int pxfix_rc_str(const char *s)
{
	return pxfix_rc(s, strlen(s));
}
