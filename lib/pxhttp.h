/* The proxy's reading of HTTP/1.1 on a connection it does not just relay:
 * plain-HTTP requests through the forward proxy (and, later, opened TLS).
 * Each request is checked on its own against the host's rules (pxrule.h),
 * rewritten for the upstream, and logged in the report's network.requests
 * with its response's status and the bytes each way. A refused request gets
 * a 403 naming the rules, after the responses before it, and the
 * connection ends. No syscalls: the caller moves the bytes. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "http1.h"
#include "pxrule.h"
#include "redact-stream.h"
#include "redact.h"
#include "report.h"
#include "strv.h"

#define PXHTTP_PIPELINE 16

/* A secret the proxy injects (policy "inject"): where the run's requests
 * carry the placeholder, the value goes on the wire instead, on requests to
 * its hosts only; anywhere else the placeholder is refused. */
struct pxhttp_secret {
	const char *name;
	const char *placeholder;   /* NUL-terminated, printable */
	const uint8_t *value;
	size_t len;
	const strv *hosts;         /* host:port patterns */
	bool in_header, in_query, allow_plaintext;
	size_t index;              /* bit in net_request.injected */
};

struct pxhttp_pending {
	char method[32];
	size_t log;      /* index in rep->net.requests, or SIZE_MAX (over the cap) */
	bool upgrade;    /* an admitted Upgrade request */
	int minor;       /* the request's HTTP/1.minor */
	bool filtered;   /* it carries a value (and the echo filter is on): its answer must be uncoded */
};

/* How a response body goes to the client while values are swapped back
 * (the swap changes lengths): */
enum {
	PXHTTP_RF_RAW,   /* as it came: no filter, or no body */
	PXHTTP_RF_SAME,  /* a body to EOF: filtered, same framing */
	PXHTTP_RF_CHUNK, /* chunked (re-chunked, or a Content-Length body made chunked) */
	PXHTTP_RF_CLOSE, /* a Content-Length body to an HTTP/1.0 peer: sent to close */
};

struct pxhttp {
	/* set by the caller */
	const struct net_rules *rules;
	struct run_report *rep;
	char host[256];
	uint16_t port;
	char target[300];   /* host:port, as the report shows it */
	bool forward;       /* absolute-form requests, one upstream request per connection */
	bool plain;         /* not forward, not opened: plain HTTP in origin form (network.transparent) */
	bool tls;           /* an opened TLS connection (secrets need it unless allow_plaintext) */
	const struct pxhttp_secret *sec;
	size_t nsec;
	/* The secrets' values (and their encoded forms) as their placeholders
	 * (a literal redactor): what the upstream says goes through it, heads
	 * and bodies. NULL: no secret is injected in this run. */
	const redactor *echo;
	/* The proxy's memory count and budget: what the echo filter holds for
	 * this connection is added to *mem while it holds it; a response whose
	 * filter would take *mem past mem_max ends the connection (counted in
	 * the report's network.over_limit). NULL: not counted. */
	size_t *mem;
	size_t mem_max;
	/* state */
	size_t charged;     /* what is counted in *mem now */
	struct h1 req, resp;
	buf cin;            /* client bytes not yet read (a refusal stops reading) */
	struct pxhttp_pending q[PXHTTP_PIPELINE];
	size_t nq;
	bool resp_opaque;   /* the response side is not HTTP (or upgraded): relayed as is */
	bool req_opaque;    /* upgraded: client bytes relayed as is */
	buf refusal;        /* a 403 waiting for the responses before it */
	bool refused, done; /* refusing; everything is said: close once flushed */
	size_t nreq;        /* requests seen */
	uint32_t injected;  /* secrets (bit k: sec[k]) injected on this connection */
	char carry[128];    /* the end of the body so far: a placeholder split across reads */
	size_t carry_len;
	struct redact_stream es; /* the response body in progress, through echo */
	int rf;                  /* PXHTTP_RF_* of that body */
};

void pxhttp_init(struct pxhttp *h, const struct net_rules *rules, struct run_report *rep, const char *host,
		 uint16_t port, const char *target, bool forward);
void pxhttp_free(struct pxhttp *h);
/* Does the secret go to this host:port (its hosts match)? */
bool pxhttp_secret_scoped(const struct pxhttp_secret *s, const char *host, uint16_t port);
/* Is the placeholder in what a request head carries (raw, or inside
 * Authorization: Basic)? Pure; exposed for tests. */
bool pxhttp_head_has(const struct h1_msg *m, const char *placeholder);
/* Bytes from the client; what goes upstream is appended to to_up, what goes
 * back to the client (a refusal) to to_down. Returns -1 if the connection
 * should end at once (a malformed request, answered with 400 in to_down). */
int pxhttp_client(struct pxhttp *h, const char *d, size_t n, buf *to_up, buf *to_down);
/* May more client bytes be read (the pipeline is not full, nothing is
 * being refused)? */
bool pxhttp_want_client(const struct pxhttp *h);
/* Does the host need its requests read (only restricted rules match it)? */
bool pxhttp_scoped(const struct net_rules *rules, const char *host, uint16_t port);

/* Internal to pxhttp.c and pxhttp-resp.c (the requests' side and the
 * responses'). */
/* Count what the echo filter holds now; false if that is past the budget. */
bool pxhttp_charge(struct pxhttp *h);
/* The echo filter's hold past the budget: dropped, the connection ends. */
void pxhttp_over_budget(struct pxhttp *h);
/* The report's entry of a logged request, or NULL. */
struct net_request *pxhttp_entry(struct pxhttp *h, size_t log);
/* A short answer from the proxy itself (403, 502 or 400) into out. */
void pxhttp_answer(buf *out, int code, const char *why);
/* Is the header value v[0..n), blanks around it aside, want (any case)? */
bool pxhttp_value_is(const char *v, size_t n, const char *want);
/* An Upgrade header other than exactly "websocket"? */
bool pxhttp_upgrade_not_websocket(const struct h1_msg *m);
/* A refusal due, and nothing left to answer before it: it goes out. */
void pxhttp_flush_refusal(struct pxhttp *h, buf *to_down);
