/* JSON-RPC 2.0 over newline-delimited JSON (MCP's stdio transport): the
 * line reader and the message check. Pure (no syscalls); fuzzed
 * (tests/fuzz/fuzz_jsonrpc.c).
 *
 * The reader bounds a line: bytes past `max` without a newline are dropped
 * up to the next newline and reported once (JRPC_TOOBIG), so one oversized
 * message costs at most `max` bytes of memory and the stream goes on. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "json.h"

enum { JRPC_PARSE_ERROR = -32700, JRPC_INVALID_REQUEST = -32600, JRPC_METHOD_NOT_FOUND = -32601,
       JRPC_INVALID_PARAMS = -32602, JRPC_INTERNAL_ERROR = -32603 };

struct jrpc_reader {
	char *buf;
	size_t len, cap, start; /* unread bytes are buf[start..len) */
	size_t max;             /* longest line taken */
	bool skipping;          /* inside a line too long: dropping to its newline */
};

enum { JRPC_NONE, JRPC_LINE, JRPC_TOOBIG };

/* Append n bytes. Returns 0, or -1 when memory ran out. */
int jrpc_reader_push(struct jrpc_reader *r, const char *data, size_t n);
/* The next complete line (without its "\n" or "\r\n"; empty lines are
 * skipped): JRPC_LINE with *line, *len valid until the next call;
 * JRPC_TOOBIG once per line longer than max; JRPC_NONE when more bytes are
 * needed. */
int jrpc_reader_next(struct jrpc_reader *r, const char **line, size_t *len);
void jrpc_reader_free(struct jrpc_reader *r);

enum jrpc_kind { JRPC_REQUEST, JRPC_NOTIFICATION, JRPC_RESPONSE };

struct jrpc_msg {
	enum jrpc_kind kind;
	jnode *root;          /* owns the rest */
	const jnode *id;      /* request, response: a string or an integer */
	const char *method;   /* request, notification */
	const jnode *params;  /* an object or absent */
};

/* Check one line as a JSON-RPC 2.0 message. Returns 0, or -1 with *code
 * (JRPC_PARSE_ERROR: not JSON; JRPC_INVALID_REQUEST: JSON but no message,
 * a batch included) and err's one line; m->id is then the id when one could
 * be read (to answer with), else NULL, and m->root must still be freed. */
int jrpc_parse(const char *line, size_t len, struct jrpc_msg *m, int *code, cordon_error *err);
void jrpc_msg_free(struct jrpc_msg *m);

/* One line (ending "\n") for the client: a result (result_json is a JSON
 * value's text), an error, a notification (params_json a JSON object's
 * text, or NULL). A NULL id writes null. Malloc'd, or NULL out of memory. */
char *jrpc_result_line(const jnode *id, const char *result_json);
char *jrpc_error_line(const jnode *id, int code, const char *message);
char *jrpc_notification_line(const char *method, const char *params_json);
