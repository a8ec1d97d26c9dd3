/* DNS messages for the run's resolver: dns.h. RFC 1035 §4.1. */
#include "dns.h"
#include <string.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The question's name at msg[*off]: labels only (a compression pointer in
 * a query's one question is refused), at most 255 bytes on the wire. */
static int read_name(const uint8_t *msg, size_t len, size_t *off, struct dns_query *q)
{
	size_t o = *off, n = 0;
	for (;;) {
		if (o >= len)
			return DNS_FORMERR;
		uint8_t l = msg[o++];
		if (l == 0)
			break;
		if (l > 63 || o + l > len || n + l + (n ? 1 : 0) > DNS_NAME_MAX)
			return DNS_FORMERR; /* a pointer (0xc0), a reserved label type, or too long */
		if (n)
			q->name[n++] = '.';
		for (uint8_t i = 0; i < l; i++) {
			char c = (char)msg[o + i];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
				c = '?';
				q->odd = true;
			}
			q->name[n++] = c;
		}
		o += l;
	}
	q->name[n] = '\0';
	*off = o;
	return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q)
{
	memset(q, 0, sizeof(*q));
	if (len < 12 || (msg[2] & 0x80))
		return -1;
	q->id = get16(msg);
	q->rd = msg[2] & 0x01;
	if ((msg[2] >> 3 & 0x0f) != 0)
		return DNS_NOTIMP; /* not a standard query (opcode) */
	if (len > DNS_MSG_MAX || get16(msg + 4) != 1 || get16(msg + 6) || get16(msg + 8))
		return DNS_FORMERR;
	size_t off = 12;
	int rc = read_name(msg, len, &off, q);
	if (rc || off + 4 > len) {
		memset(q->name, 0, sizeof(q->name));
		q->odd = false;
		return DNS_FORMERR;
	}
	q->qtype = get16(msg + off);
	q->qclass = get16(msg + off + 2);
	q->question = msg + 12;
	q->qlen = off + 4 - 12;
	if (q->qclass != 1)
		return DNS_REFUSED;
	return 0;
}

int dns_build_answer(const struct dns_query *q, int rcode, const uint8_t *addr, size_t alen, uint32_t ttl,
		     uint8_t *out, size_t outsz)
{
	bool rr = addr && q->qlen && ((q->qtype == DNS_T_A && alen == 4) || (q->qtype == DNS_T_AAAA && alen == 16));
	size_t need = 12 + q->qlen + (rr ? 12 + alen : 0);
	if (need > outsz)
		return -1;
	memset(out, 0, 12);
	put16(out, q->id);
	out[2] = (uint8_t)(0x80 | 0x04 | (q->rd ? 0x01 : 0)); /* QR, AA, RD as asked */
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));             /* RA, the rcode */
	put16(out + 4, q->qlen ? 1 : 0);
	put16(out + 6, rr ? 1 : 0);
	if (q->qlen)
		memcpy(out + 12, q->question, q->qlen);
	if (rr) {
		uint8_t *p = out + 12 + q->qlen;
		put16(p, 0xc00c); /* the question's name */
		put16(p + 2, q->qtype);
		put16(p + 4, 1);
		put16(p + 6, (uint16_t)(ttl >> 16));
		put16(p + 8, (uint16_t)ttl);
		put16(p + 10, (uint16_t)alen);
		memcpy(p + 12, addr, alen);
	}
	return (int)need;
}
