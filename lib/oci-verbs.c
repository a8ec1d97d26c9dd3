/* The lifecycle verbs after create (docs/oci.md), each a short-lived
 * client of the state directory ROOT/ID: start (asks the supervisor over
 * sup.sock, then runs the poststart hooks), kill, delete (kills what is left
 * in the cgroup, lets the supervisor write its report, runs the poststop
 * hooks, frees the host id range), pause/resume (the cgroup freezer), wait,
 * and the features document. The hooks are those of the config create kept
 * in ROOT/ID, never the bundle's again. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oci-verbs.h"
#include "error.h"
#include "oci-config.h"
#include "oci-state.h"
#include "oci-cgroup.h"
#include "oci-common.h"
#include "oci-slots.h"

int oci_start(const char *root, const char *id, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, true, &dfd, &s, err) < 0)
		return -1;
	enum oci_status st = oci_state_status(dfd, &s);
	int r = 0;
	if (st != OCI_CREATED) {
		r = cordon_err(err, 0, "cannot start container \"%s\": it is %s, not created", id, oci_status_names[st]);
		goto out;
	}
	int cs = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	oci_sup_sock_path(dfd, &a);
	if (cs < 0 || connect(cs, (struct sockaddr *)&a, sizeof(a)) < 0) {
		r = cordon_err_errno(err, "cannot reach container \"%s\"'s supervisor", id);
		if (cs >= 0)
			close(cs);
		goto out;
	}
	flock(dfd, LOCK_UN); /* the supervisor writes the state */
	char text[OCI_MSG_MAX];
	int fd;
	int t = oci_send(cs, OCI_MSG_GO2, "", -1) < 0 ? -1 : oci_recv(cs, text, &fd);
	close(cs);
	if (t != OCI_MSG_READY) {
		r = cordon_err(err, 0, "starting container \"%s\": %s", id,
			       t == OCI_MSG_ERROR ? text : "the supervisor did not answer");
		goto out;
	}
	struct oci_config c;
	cordon_error e2;
	/* create's copy: the bundle's config.json may have changed since */
	if (oci_config_load_kept(dfd, s.bundle, &c, &e2) == 0) {
		char sj[OCI_MSG_MAX];
		s.started = true;
		oci_state_json_of(&s, OCI_RUNNING, sj, sizeof(sj));
		oci_hooks_run_warn(&c, OCI_H_POSTSTART, sj); /* a failure is a warning (the spec) */
		oci_config_free(&c);
	}
out:
	oci_state_free(&s);
	close(dfd);
	return r;
}

static int signal_all(const struct oci_state *s, int sig)
{
	pid_t *p = NULL;
	size_t n = 0;
	if (s->cgroup[0] && oci_cgroup_pids(s->cgroup, &p, &n) == 0)
		for (size_t i = 0; i < n; i++)
			kill(p[i], sig);
	free(p);
	return 0;
}

int oci_kill(const char *root, const char *id, int sig, bool all, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	int r = 0;
	enum oci_status st = oci_state_status(dfd, &s);
	int pfd = oci_pidfd_same(s.pid, s.start_time);
	if (st == OCI_STOPPED || pfd < 0)
		r = cordon_err(err, ESRCH, "container \"%s\" is not running (no such process)", id);
	else {
		if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0)
			r = cordon_err_errno(err, "kill %s", id);
		if (all)
			signal_all(&s, sig);
		if (sig == SIGKILL || sig == SIGTERM)
			if (st == OCI_PAUSED)
				oci_cgroup_freeze(s.cgroup, false, NULL);
	}
	if (pfd >= 0)
		close(pfd);
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_delete(const char *root, const char *id, bool force, cordon_error *err)
{
	int dfd;
	if (oci_state_open(root, id, &dfd, err) < 0)
		return -1;
	if (oci_state_lock(dfd, err) < 0) {
		close(dfd);
		return -1;
	}
	struct oci_state s;
	if (oci_state_read(dfd, &s, err) < 0) {
		/* no state.json: a create that died half-way; its supervisor cleans up */
		close(dfd);
		if (!force)
			return cordon_err(err, 0, "container \"%s\" is being created (use --force)", id);
		return oci_state_remove(root, id, err);
	}
	enum oci_status st = oci_state_status(dfd, &s);
	if (st != OCI_STOPPED && !force) {
		oci_state_free(&s);
		close(dfd);
		return cordon_err(err, 0, "cannot delete container \"%s\": it is %s, not stopped (use --force)", id,
				  oci_status_names[st]);
	}
	if (st != OCI_STOPPED) {
		if (st == OCI_PAUSED)
			oci_cgroup_freeze(s.cgroup, false, NULL);
		int pfd = oci_pidfd_same(s.pid, s.start_time);
		if (pfd >= 0) {
			syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
			close(pfd);
		}
		signal_all(&s, SIGKILL);
		oci_wait_gone(s.pid, s.start_time, 10000);
	}
	/* the rest of the cgroup, then the supervisor (it writes the report) */
	for (int i = 0; i < 100; i++) {
		pid_t *p = NULL;
		size_t n = 0;
		if (oci_cgroup_pids(s.cgroup, &p, &n) < 0 || n == 0) {
			free(p);
			break;
		}
		for (size_t k = 0; k < n; k++)
			kill(p[k], SIGKILL);
		free(p);
		usleep(10000);
	}
	oci_wait_gone(s.sup, s.sup_start, 5000);
	int spfd = oci_pidfd_same(s.sup, s.sup_start);
	if (spfd >= 0) {
		syscall(SYS_pidfd_send_signal, spfd, SIGKILL, NULL, 0);
		close(spfd);
	}
	int r = oci_cgroup_remove(s.cgroup, err);
	struct oci_config c;
	cordon_error e2;
	if (oci_config_load_kept(dfd, s.bundle, &c, &e2) == 0) {
		char sj[OCI_MSG_MAX];
		oci_state_json_of(&s, OCI_STOPPED, sj, sizeof(sj));
		oci_hooks_run_warn(&c, OCI_H_POSTSTOP, sj); /* a failure is a warning (the spec) */
		oci_config_free(&c);
	}
	oci_slot_release(dfd, s.slot);
	oci_state_free(&s);
	close(dfd);
	if (oci_state_remove(root, id, r < 0 ? &e2 : err) < 0 && r == 0)
		r = -1;
	return r;
}

int oci_pause(const char *root, const char *id, bool pause, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, true, &dfd, &s, err) < 0)
		return -1;
	enum oci_status st = oci_state_status(dfd, &s);
	int r;
	if (pause && st != OCI_RUNNING && st != OCI_CREATED)
		r = cordon_err(err, 0, "cannot pause container \"%s\": it is %s", id, oci_status_names[st]);
	else if (!pause && st != OCI_PAUSED)
		r = cordon_err(err, 0, "cannot resume container \"%s\": it is %s, not paused", id, oci_status_names[st]);
	else
		r = oci_cgroup_freeze(s.cgroup, pause, err);
	oci_state_free(&s);
	close(dfd);
	return r;
}

int oci_wait(const char *root, const char *id, int *status, cordon_error *err)
{
	int dfd;
	struct oci_state s;
	if (oci_open_read(root, id, false, &dfd, &s, err) < 0)
		return -1;
	*status = 0;
	int st = 0;
	if (waitpid(s.pid, &st, 0) == s.pid)
		*status = st;
	else
		oci_wait_gone(s.pid, s.start_time, -1);
	oci_state_free(&s);
	close(dfd);
	return 0;
}

int oci_features_json(buf *out)
{
	jwriter w = {0};
	jw_obj_begin(&w);
	jw_key(&w, "ociVersionMin");
	jw_str(&w, "1.0.0");
	jw_key(&w, "ociVersionMax");
	jw_str(&w, OCI_VERSION);
	jw_key(&w, "hooks");
	jw_str_array(&w, oci_hook_names, OCI_H_N);
	static const char *const mo[] = {"async", "atime", "bind", "dev", "diratime", "dirsync", "exec", "mand",
					 "noatime", "nodev", "nodiratime", "noexec", "nomand", "norelatime",
					 "nostrictatime", "nosuid", "private", "rbind", "relatime", "remount", "ro",
					 "rprivate", "rshared", "rslave", "runbindable", "rw", "shared", "slave",
					 "strictatime", "suid", "sync", "unbindable"};
	jw_key(&w, "mountOptions");
	jw_str_array(&w, mo, sizeof(mo) / sizeof(mo[0]));
	jw_key(&w, "linux");
	jw_obj_begin(&w);
	static const char *const ns[] = {"cgroup", "ipc", "mount", "network", "pid", "user", "uts"};
	jw_key(&w, "namespaces");
	jw_str_array(&w, ns, sizeof(ns) / sizeof(ns[0]));
	jw_key(&w, "capabilities");
	jw_arr_begin(&w);
	for (int i = 0; i <= 40; i++) {
		static const char *const names[] = {
			"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
			"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
			"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
			"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
			"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
			"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
			"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
			"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"};
		jw_str(&w, names[i]);
	}
	jw_arr_end(&w);
	jw_key(&w, "cgroup");
	jw_obj_begin(&w);
	jw_key(&w, "v1");
	jw_bool(&w, true);
	jw_key(&w, "v2");
	jw_bool(&w, true);
	jw_key(&w, "systemd");
	jw_bool(&w, false);
	jw_key(&w, "systemdUser");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "seccomp");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, true);
	static const char *const acts[] = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
					   "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRAP", "SCMP_ACT_TRACE"};
	jw_key(&w, "actions");
	jw_str_array(&w, acts, sizeof(acts) / sizeof(acts[0]));
	static const char *const ops[] = {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
					  "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE"};
	jw_key(&w, "operators");
	jw_str_array(&w, ops, sizeof(ops) / sizeof(ops[0]));
	static const char *const arch[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
	jw_key(&w, "archs");
	jw_str_array(&w, arch, sizeof(arch) / sizeof(arch[0]));
	jw_obj_end(&w);
	jw_key(&w, "apparmor");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "selinux");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_key(&w, "mountExtensions");
	jw_obj_begin(&w);
	jw_key(&w, "idmap");
	jw_obj_begin(&w);
	jw_key(&w, "enabled");
	jw_bool(&w, false);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_key(&w, "annotations");
	jw_obj_begin(&w);
	jw_key(&w, "run.cordon.report");
	jw_str(&w, "a path: the run's cordon.report/1 is written there when the container stops");
	jw_key(&w, "run.cordon.user-namespace");
	jw_str(&w, "always: the container's root is never the host's root");
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (jw_finish(&w) < 0)
		return -1;
	*out = w.out;
	return 0;
}
