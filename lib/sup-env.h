/* The command's environment (sup-env.c). */
#pragma once
#include "policy.h"
#include "secrets.h"
#include "strv.h"

/* Appends to env, in order: the defaults PATH, HOME=/tmp, LANG and TERM
 * (the caller's options, else C.UTF-8 and dumb) unless the policy sets them;
 * the policy's variables, the last of each name; CORDON_CHECK_DIR for a
 * check (check_dir non-empty); the proxy variables when the policy allows
 * egress; the secrets delivered as variables, from index *secret_start on
 * (last: they win). */
int sup_env_build(const cordon_policy *p, const char *check_dir, const struct secrets *sec, strv *env,
		  size_t *secret_start, cordon_error *err);
/* sup_env_build's steps: the variables the policy declares (the defaults
 * and its own), then cordon's (the check's directory, the proxy's, the
 * CA's). `cordon explain` lists the names of the first part. */
int sup_env_declared(const cordon_policy *p, strv *env, cordon_error *err);
int sup_env_cordon(const cordon_policy *p, const char *check_dir, strv *env, cordon_error *err);
/* The last step of sup_env_build alone: the secrets delivered as variables,
 * appended to env from index *secret_start on (the boundary model's
 * environment has none: their values exist only at run time). */
int sup_env_add_secrets(const struct secrets *sec, strv *env, size_t *secret_start, cordon_error *err);
