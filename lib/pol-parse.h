/* The policy's loaders (pol-parse.c): a JSON policy, from text or a file
 * (bounded, never following a link), every key checked and every error
 * naming its file, line and column; a ledger file. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"
#include "ledger.h"

/* Load a JSON policy file into p (merging). Errors read
 * "FILE:LINE:COL: what". Relative paths resolve against the file's directory. */
int policy_load_file(cordon_policy *p, const char *path, cordon_error *err);

/* Same from memory; base_dir resolves relative paths; name is used in errors. */
int policy_load_json(cordon_policy *p, const char *text, size_t len, const char *name,
		     const char *base_dir, cordon_error *err);

/* Parse a `cordon ledger` file: {"limit": SIZE, "events": [...]}. */
int ledger_load_file(const char *path, struct ledger *l, uint64_t *limit, cordon_error *err);
