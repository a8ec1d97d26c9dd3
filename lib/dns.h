/* DNS messages for the run's resolver (issue 33): read one query, write
 * its answer. Pure code (no syscalls, no allocation): a query is read from
 * the caller's bytes into a fixed struct, an answer written into the
 * caller's buffer. Only what a stub resolver sends is taken: one question,
 * no compression in it, class IN; EDNS options in the additional section
 * are ignored (the answer carries none, and fits 512 bytes). Fuzzed
 * (tests/fuzz/fuzz_dns.c) and unit-tested (tests/unit/test_dns.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_MSG_MAX 512   /* the largest query read, the largest answer written */
#define DNS_NAME_MAX 253  /* a name's text, without the root's dot */

enum { DNS_T_A = 1, DNS_T_AAAA = 28 };
enum { DNS_NOERROR = 0, DNS_FORMERR = 1, DNS_SERVFAIL = 2, DNS_NXDOMAIN = 3, DNS_NOTIMP = 4, DNS_REFUSED = 5 };

struct dns_query {
	uint16_t id;
	bool rd;                     /* recursion desired: echoed */
	uint16_t qtype, qclass;
	/* The name, lower-case, dotted, no trailing dot ("" for the root).
	 * A byte that is neither a letter, a digit, '-' nor '_' is '?' here
	 * and sets odd: such a name matches no rule. */
	char name[DNS_NAME_MAX + 1];
	bool odd;
	const uint8_t *question;     /* the question as sent (name, type, class) */
	size_t qlen;                 /* its length; 0 when it could not be read */
};

/* Read a query. Returns 0 (answer it), an rcode > 0 (answer with that
 * rcode: DNS_FORMERR, DNS_NOTIMP, DNS_REFUSED; the question is echoed only
 * if it was read), or -1: nothing to answer (shorter than a header, or a
 * response: never answered, so that two resolvers cannot loop). q->name
 * and q->question point into q or msg: msg must outlive q. */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q);

/* Write the answer to q into out (outsz bytes): rcode, and, with addr (4
 * bytes for A, 16 for AAAA, matching q->qtype), one record of that address
 * with ttl seconds. Returns its length, or -1 if outsz is too small (never
 * with outsz >= DNS_MSG_MAX). */
int dns_build_answer(const struct dns_query *q, int rcode, const uint8_t *addr, size_t alen, uint32_t ttl,
		     uint8_t *out, size_t outsz);
