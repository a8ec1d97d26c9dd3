/* The change set's seal (cs-seal.c): the user's key directory (found,
 * checked from / with no link followed, the key made once), the registry of
 * directories of change sets beside the key, the guard that keeps a run from
 * the key, and the HMAC over a change set's control files that
 * changeset_open checks. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "changeset.h"
#include "error.h"
#include "strv.h"

/* The directory of the key that seals this user's change sets:
 * $CORDON_STATE_DIR if set (absolute), else /var/lib/cordon for root, else
 * $XDG_STATE_HOME/cordon or ~/.local/state/cordon. Made 0700 on first use;
 * the key (changeset.key, 32 random bytes, 0600) must be the user's own and
 * nobody else's. Masked in every run's view (model.c). -1: no such place. */
int changeset_keydir(char *out, size_t sz);

/* The same directory (the user's state directory), checked as the key's
 * is (reached from / with no link followed, every directory on the way
 * root's or the user's and writable by nobody else, the directory itself
 * the user's and not group- or other-writable), made first (0700) with
 * create: an O_RDONLY|O_DIRECTORY fd, or -1 and err (ENOENT: none). What
 * must be as safe as the key lives there too (seccomp-cache.c); every run
 * that could reach it sees it masked (model.c). */
int cordon_state_dir_open(bool create, cordon_error *err);

/* Hold the state directory checked once for the rest of a run (on), or
 * let it go (off): between the two, the directory found and checked first is
 * the one every later ask gets (an fd of it, still the user's and writable
 * by nobody else), not walked from / again. Per thread; a run's
 * (run_command, cordon_session_run). */
void cordon_state_dir_hold(bool on);

/* The directories of change sets this user's cordon made (the list beside
 * the key), appended to out; 0 (nothing added) where there is no key
 * directory. -1 and err where there is one that cannot be used (a run may
 * have changed the mode of a directory on its way, to leave the kept change
 * sets listed there unmasked): no run should start then. */
int changeset_registered(strv *out, cordon_error *err);

/* Can the key be kept from a run with these paths (canonical; writable[i]
 * for a writable one)? Not where a symbolic link on the way to the key's
 * directory lies in a writable path (the run could point it at a key of its
 * own), nor where the way cannot be walked (a directory that cannot be
 * searched: a run may have changed its mode) and the run would see there:
 * -1 and err saying which. */
int changeset_key_guard(const char *const *paths, const bool *writable, size_t n, cordon_error *err);

/* Make the user's change-set key if there is none (checked either way). */
int changeset_key_ensure(cordon_error *err);

void cs_registry_add(const char *top);
/* The user's key (made if there is none), to seal a change set with. */
int cs_seal_key_load(unsigned char key[32], cordon_error *err);
/* The seal, with the key the set holds (key_held) or the user's. */
int cs_write_seal(const struct changeset *cs, cordon_error *err);
/* The same, written as name (a new file) in the set's directory. */
int cs_write_seal_as(const struct changeset *cs, const char *name, cordon_error *err);
int cs_check_seal(const struct changeset *cs, cordon_error *err);
/* The same, of the file name (a pending set's, changeset_derive). */
int cs_check_seal_as(const struct changeset *cs, const char *name, cordon_error *err);
