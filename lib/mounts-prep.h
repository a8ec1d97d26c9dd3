/* The supervisor's side of the mounts (mounts-prep.c): before clone, the
 * model turned into init's steps (mounts_prepare, which alone allocates and
 * decides); as root, the idmapped trees cloned for init; a bind without
 * idmapped mounts handed to the run's uid and back (mounts_chown_tree).
 * Init applies the steps: mounts.c (mounts.h). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "cordon.h"
#include "model.h"
#include "mounts.h"

/* Supervisor: the steps of model m, in order. An entry in no step is not
 * mounted: absent on the host, a protected path not there yet, the root. */
int mounts_prepare(const struct boundary_model *m, struct mount_steps *out, cordon_error *err);
void mount_steps_free(struct mount_steps *s);

/* Parent side: for each bind, clone the host tree as the supervisor (so a
 * source below a 0700 directory works) and configure it: rw and owned binds
 * are idmapped so that files the run creates belong to host_uid/gid while
 * the run's own host identity is sandbox_uid; ro binds are made read-only.
 * fds[i] = -1 for tmpfs. Needs host CAP_SYS_ADMIN; call only when cordon
 * runs as root. */
/* A stacked workspace's shared layer (layers.h) at path: cloned, read-only,
 * idmapped through userns_fd as the workspace's own tree is. Its fd, or -1
 * and err. */
int mounts_prepare_layer(const char *path, int userns_fd, cordon_error *err);
int mounts_prepare_idmapped(const struct cordon_mount *m, size_t n, int userns_fd, int *fds,
			    bool *no_idmap, cordon_error *err);
/* Where a filesystem has no idmapped mounts (tmpfs before Linux 6.3, some
 * FUSE and network filesystems: EINVAL), mounts_prepare_idmapped sets
 * no_idmap[i] and fds[i] = -1 instead of failing, and the mount is a plain
 * bind. The supervisor then hands the files of the invoking user to the
 * run's host uid for the run and back afterwards:
 * every entry below path (on path's filesystem, symlinks not followed, not
 * crossing mounts) owned by from_uid/from_gid is chowned to to_uid/to_gid.
 * Bounded to MOUNTS_CHOWN_MAX entries and MOUNTS_CHOWN_DEPTH levels. */
#define MOUNTS_CHOWN_MAX 1000000
#define MOUNTS_CHOWN_DEPTH 256
int mounts_chown_tree(const char *path, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
		      cordon_error *err);
/* The same for the hand-over (to the run's uid), but a file with more than
 * one name (a hard link, whose other name may be outside path) is left to
 * its owner. */
int mounts_hand_tree(const char *path, uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid,
		     cordon_error *err);
