/* Egress rules beyond host:port: the entries of network.allow, each a host
 * pattern and, for the object form, the methods and paths it admits.
 *
 *   "api.github.com:443"                                  any request
 *   {"host": "api.github.com:443", "methods": ["GET"],    only these
 *    "paths": ["/repos/acme/<**>"] (no brackets), "upgrade": false}
 *
 * A path pattern is '/'-separated; a segment "*" is one segment, "**" any
 * number of them (none included); every other segment is literal. The query
 * is never part of the match. A request's path is percent-decoded segment by
 * segment before matching, and one with a "." or ".." segment, or an encoded
 * '/' or '\' or NUL, matches no pattern: what is checked is what a server
 * resolves. Pure code (no syscalls); fuzzed and unit-tested. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "cordon.h"
#include "strv.h"

#define PXRULE_MAX_SEGMENTS 32
#define PXRULE_PATH_MAX 8192

struct net_rule {
	char *host;     /* host:port pattern, as proxy_rule_matches takes it */
	strv methods;   /* empty: any method */
	strv paths;     /* empty: any path */
	bool upgrade;   /* Upgrade (websocket) requests admitted */
};

struct net_rules {
	struct net_rule *v;
	size_t n;
};

/* Does the rule restrict requests (methods, paths or upgrade)? A host whose
 * every matching rule is restricted needs its requests read. */
bool pxrule_restricted(const struct net_rule *r);
/* Add a rule (host already validated). methods: HTTP tokens, upper-cased
 * here; paths: patterns as above, checked. An unrestricted rule for a host
 * that already has one is not added twice. Errors name the bad item. */
int pxrule_add(struct net_rules *rs, const char *host, const strv *methods, const strv *paths, bool upgrade,
	       cordon_error *err);
int pxrule_copy(struct net_rules *dst, const struct net_rules *src);
void pxrule_free(struct net_rules *rs);

/* Is a path pattern well formed? NULL if so, else why not. */
const char *pxrule_pattern_error(const char *pattern);
/* Does the request target's path (origin-form, query and fragment ignored)
 * match the pattern? */
bool pxrule_path_matches(const char *pattern, const char *target);
/* Does rule r admit this request (host already matched)? */
bool pxrule_admits(const struct net_rule *r, const char *method, const char *target, bool upgrade);
/* Is every request task admits also admitted by ceiling (hosts aside)? */
bool pxrule_within(const struct net_rule *task, const struct net_rule *ceiling);
/* One line: "host:port methods GET,HEAD paths /a/<**>,/b upgrade" (only the
 * parts the rule has). */
void pxrule_describe(const struct net_rule *r, char *out, size_t outsz);
/* The path of a request target without its query or fragment, printable
 * (other bytes as '?'), cut to outsz. */
void pxrule_target_path(const char *target, char *out, size_t outsz);
/* Does host:port match the rule's "host:port" ("*.domain", IPv4/[IPv6]
 * literals, "host:*"; localhost is the loopback)? literal: the rule names
 * this address literally. */
bool proxy_rule_matches(const char *rule, const char *host, uint16_t port, bool *literal);
/* network.resolve's pin for name ("name=address" entries): the address,
 * with port, in dst; false without one. */
bool pxrule_pin(const strv *resolve, const char *name, uint16_t port, struct sockaddr_storage *dst, socklen_t *len);
