/* A container's state directory (lib/oci-state.c): ROOT/ID, its state.json
 * and lock, the status as of now, the uid/gid slots, process identity. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cordon.h"
#include "json.h"
#include "strv.h"

enum oci_status { OCI_CREATING, OCI_CREATED, OCI_RUNNING, OCI_STOPPED, OCI_PAUSED };
extern const char *const oci_status_names[];
struct oci_state {
	char id[256];
	char bundle[4096];
	pid_t pid;              /* the workload's init, as the host numbers it */
	uint64_t start_time;    /* its /proc/PID/stat starttime (pid reuse) */
	pid_t sup;              /* the supervisor */
	uint64_t sup_start;
	int slot;               /* the uid/gid range (lib/oci-slots.h), -1: none taken */
	bool started;
	char created[64];       /* RFC 3339 */
	char cgroup[1024];      /* relative cgroup path */
	char report[4096];      /* annotation run.cordon.report, or "" */
	bool paused;
	strv ann_k, ann_v;
	strv poststop;          /* unused: hooks are read again from config */
};
/* Is id a valid container id (letters, digits, "._-+", at most 255)? */
bool oci_id_valid(const char *id);
/* Make ROOT (0700; refused where another user could change it:
 * oci_safe_dir_open) and ROOT/ID exclusively: the id's existence is the mkdir. */
int oci_state_mkdir(const char *root, const char *id, int *dirfd, cordon_error *err);
/* Open ROOT/ID (ENOENT: "container ID does not exist"), ROOT checked as
 * oci_state_mkdir does. */
int oci_state_open(const char *root, const char *id, int *dirfd, cordon_error *err);
/* flock the state directory (exclusive). */
int oci_state_lock(int dirfd, cordon_error *err);
int oci_state_read(int dirfd, struct oci_state *s, cordon_error *err);
int oci_state_write(int dirfd, const struct oci_state *s, cordon_error *err);
void oci_state_free(struct oci_state *s);
/* The status as of now: creating (no state.json yet), created, running, paused, stopped. */
enum oci_status oci_state_status(int dirfd, const struct oci_state *s);
/* The runtime-spec state JSON. */
int oci_state_json(const struct oci_state *s, enum oci_status st, buf *out);
/* Remove ROOT/ID and what is in it. */
int oci_state_remove(const char *root, const char *id, cordon_error *err);
/* /proc/PID/stat starttime, 0 if the process is gone. */
uint64_t oci_proc_start(pid_t pid);
/* Alive and the same process (start time). */
bool oci_proc_same(pid_t pid, uint64_t start);
/* A pidfd for pid if it is still the process that started at start, else -1. */
int oci_pidfd_same(pid_t pid, uint64_t start);
/* RFC 3339 UTC time now. */
void oci_now(char *out, size_t outsz);
