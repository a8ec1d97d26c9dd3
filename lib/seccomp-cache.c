/* The compiled seccomp programs of earlier runs (seccomp-cache.h). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "openat2.h"
#include "seccomp-cache.h"
#include "cleanup.h"
#include "ident.h"
#include "compat.h"
#include "cordon.h"
#include "cs-seal.h"
#include "hash.h"
#include "model.h"
#include "systab.h"

#define CACHE_DIR "seccomp"
#define CACHE_MAGIC "CDNBPF01"

/* An entry: this header, then ninsns struct sock_filter. */
struct cache_head {
	char magic[8];
	uint32_t ninsns;
	uint32_t notify;
	char key[64];
	char prog_sha256[64];
};

static bool cache_off(void)
{
	const char *v = secure_getenv("CORDON_SECCOMP_CACHE");
	return v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0);
}

/* ---- the key ---- */

struct build_id_find {
	uintptr_t addr;
	sha256_ctx *c;
	bool found;
};

/* The GNU build id of the loaded object whose segments hold f->addr. */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_find *f = data;
	(void)size;
	bool mine = false;
	for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		mine = ph->p_type == PT_LOAD && f->addr >= lo && f->addr - lo < ph->p_memsz;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3u) & ~3u, desc = (n->n_descsz + 3u) & ~3u;
			const char *nm = p + sizeof(*n), *ds = nm + name;
			if ((size_t)(end - nm) < name || (size_t)(end - ds) < desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(nm, "GNU", 4) == 0 &&
			    n->n_descsz > 0) {
				sha256_update(f->c, ds, n->n_descsz);
				f->found = true;
				return 1;
			}
			p = ds + desc;
		}
	}
	return 1; /* the object, without a build id */
}

static bool add_build_id(sha256_ctx *c, const void *addr)
{
	struct build_id_find f = {(uintptr_t)addr, c, false};
	dl_iterate_phdr(build_id_cb, &f);
	return f.found;
}

static void put_bytes(sha256_ctx *c, const void *p, size_t n)
{
	uint64_t l = n;
	sha256_update(c, &l, sizeof(l));
	sha256_update(c, p, n);
}

static void put_str(sha256_ctx *c, const char *s)
{
	put_bytes(c, s, strlen(s));
}

static void put_u64(sha256_ctx *c, uint64_t v)
{
	sha256_update(c, &v, sizeof(v));
}

static void put_strv(sha256_ctx *c, const strv *l)
{
	put_u64(c, l->n);
	for (size_t i = 0; i < l->n; i++)
		put_str(c, l->v[i]);
}

int seccomp_cache_key(const struct model_run *r, bool notify, const char *const *observe, char key[65])
{
	key[0] = '\0';
	if (cache_off())
		return -1;
	sha256_ctx *c = sha256_new();
	if (!c)
		return -1;
	/* What builds the program: cordon's code and tables, libseccomp's
	 * code (linked in or loaded: its build id either way), its version. */
	const struct scmp_version *v = seccomp_version();
	put_str(c, "cordon seccomp cache 1");
	put_str(c, CORDON_VERSION);
	if (!add_build_id(c, (const void *)seccomp_cache_key) || !add_build_id(c, (const void *)seccomp_init) || !v) {
		sha256_free(c);
		return -1;
	}
	put_u64(c, v->major);
	put_u64(c, v->minor);
	put_u64(c, v->micro);
	put_u64(c, systab_native());
	put_u64(c, (uint64_t)systab_max(systab_native()));
	/* What the plan says. */
	put_u64(c, notify);
	put_u64(c, r->sys_rules);
	put_strv(c, &r->sys_deny);
	put_strv(c, &r->sys_deny_policy);
	size_t n = 0;
	for (const char *const *o = observe; o && *o; o++)
		n++;
	put_u64(c, observe ? n + 1 : 0);
	for (const char *const *o = observe; o && *o; o++)
		put_str(c, *o);
	sha256_final_hex(c, key);
	return 0;
}

/* ---- the entries ---- */

static int cache_open(int dirfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	return sys_openat2(dirfd, name, &how);
}

/* Owned by the user, writable by no one else. */
static bool own_st(const struct stat *st, uid_t me)
{
	return st->st_uid == me && !(st->st_mode & 022);
}

/* The cache's directory below the state directory, checked; made first
 * with create. -1: none to use. */
static int open_cache_dir(bool create, uid_t me)
{
	cordon_error e = {0};
	_cleanup_close_ int sd = cordon_state_dir_open(create, &e);
	if (sd < 0)
		return -1;
	if (create && mkdirat(sd, CACHE_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	int d = cache_open(sd, CACHE_DIR, O_RDONLY | O_DIRECTORY);
	struct stat st;
	if (d >= 0 && (fstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || !own_st(&st, me))) {
		close(d);
		return -1;
	}
	return d;
}

static void entry_name(const char key[65], char name[80])
{
	snprintf(name, 80, "%.64s.bpf", key);
}

/* A sealed memfd holding the program, as seccomp_plan_export makes it. */
static int sealed_memfd(const void *p, size_t n)
{
	_cleanup_close_ int fd = memfd_create("cordon-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || pwrite(fd, p, n, 0) != (ssize_t)n ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return -1;
	return TAKE_FD(fd);
}

/* A verified entry for key into out; -1: a miss, for whatever reason. */
static int cache_load(const char key[65], bool notify, struct seccomp_plan *out)
{
	uid_t me = ident_euid();
	_cleanup_close_ int d = open_cache_dir(false, me);
	if (d < 0)
		return -1;
	char name[80];
	entry_name(key, name);
	_cleanup_close_ int fd = cache_open(d, name, O_RDONLY | O_NONBLOCK);
	struct stat st;
	const off_t max = (off_t)(sizeof(struct cache_head) + BPF_MAXINSNS * sizeof(struct sock_filter));
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !own_st(&st, me) || st.st_nlink != 1 ||
	    st.st_size <= (off_t)sizeof(struct cache_head) || st.st_size > max)
		return -1;
	_cleanup_free_ char *b = malloc((size_t)st.st_size);
	if (!b || pread(fd, b, (size_t)st.st_size, 0) != st.st_size)
		return -1;
	struct cache_head h;
	memcpy(&h, b, sizeof(h));
	size_t plen = (size_t)st.st_size - sizeof(h);
	if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0 || h.ninsns == 0 || h.ninsns > BPF_MAXINSNS ||
	    (size_t)h.ninsns * sizeof(struct sock_filter) != plen || h.notify != (uint32_t)notify ||
	    memcmp(h.key, key, 64) != 0)
		return -1;
	char sum[65];
	sha256_hex(b + sizeof(h), plen, sum);
	if (memcmp(sum, h.prog_sha256, 64) != 0)
		return -1;
	struct sock_filter *insns = malloc(plen);
	if (!insns)
		return -1;
	memcpy(insns, b + sizeof(h), plen);
	int m = sealed_memfd(insns, plen);
	if (m < 0) {
		free(insns);
		return -1;
	}
	out->insns = insns;
	out->len = (unsigned short)h.ninsns;
	out->memfd = m;
	return 0;
}

int seccomp_build_cached(const struct model_run *r, bool notify, const char *const *observe,
			 struct seccomp_plan *out, bool *hit, char key[65], cordon_error *err)
{
	*hit = false;
	if (seccomp_cache_key(r, notify, observe, key) == 0) {
		memset(out, 0, sizeof(*out));
		out->memfd = -1;
		out->notify = seccomp_plan_listens(notify, r->sys_rules);
		out->observe = observe && notify;
		if (cache_load(key, out->notify, out) == 0) {
			*hit = true;
			key[0] = '\0';
			return 0;
		}
	}
	return seccomp_build_from(r, notify, observe, out, err);
}

struct cache_ent {
	char name[80];
	struct timespec t;
};

static int newest_first(const void *a, const void *b)
{
	const struct timespec *x = &((const struct cache_ent *)a)->t, *y = &((const struct cache_ent *)b)->t;
	if (x->tv_sec != y->tv_sec)
		return x->tv_sec > y->tv_sec ? -1 : 1;
	return x->tv_nsec > y->tv_nsec ? -1 : x->tv_nsec < y->tv_nsec;
}

/* At most SECCOMP_CACHE_MAX entries: the oldest written go (past
 * 4 * SECCOMP_CACHE_MAX of them, which only someone else's hand makes, the
 * rest go unsorted); a file left half-written by a cordon that died goes
 * after a minute. */
static void cache_prune(int d)
{
	int dd = dup(d);
	_cleanup_closedir_ DIR *dir = dd >= 0 ? fdopendir(dd) : NULL;
	if (!dir) {
		if (dd >= 0)
			close(dd);
		return;
	}
	struct cache_ent ents[4 * SECCOMP_CACHE_MAX];
	size_t n = 0;
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(dir));) {
		struct stat st;
		if (e->d_name[0] == '.' || fstatat(d, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (strncmp(e->d_name, "tmp.", 4) == 0) {
			if (now - st.st_mtime > 60)
				(void)unlinkat(d, e->d_name, 0);
			continue;
		}
		size_t l = strlen(e->d_name);
		if (l != 68 || strcmp(e->d_name + 64, ".bpf") != 0)
			continue;
		if (n == ARRAY_SIZE(ents)) {
			(void)unlinkat(d, e->d_name, 0);
			continue;
		}
		snprintf(ents[n].name, sizeof(ents[n].name), "%s", e->d_name);
		ents[n++].t = st.st_mtim;
	}
	if (n <= SECCOMP_CACHE_MAX)
		return;
	qsort(ents, n, sizeof(ents[0]), newest_first);
	for (size_t i = SECCOMP_CACHE_MAX; i < n; i++)
		(void)unlinkat(d, ents[i].name, 0);
}

void seccomp_cache_store(const char key[65], const struct seccomp_plan *p)
{
	if (!key[0] || !p->insns || !p->len || p->len > BPF_MAXINSNS)
		return;
	_cleanup_close_ int d = open_cache_dir(true, ident_euid());
	if (d < 0)
		return;
	struct cache_head h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.ninsns = p->len;
	h.notify = p->notify;
	memcpy(h.key, key, 64);
	size_t plen = (size_t)p->len * sizeof(struct sock_filter);
	char sum[65];
	sha256_hex(p->insns, plen, sum);
	memcpy(h.prog_sha256, sum, 64);
	char tmp[64], name[80];
	unsigned char rnd[8];
	if (getentropy(rnd, sizeof(rnd)) < 0)
		return;
	snprintf(tmp, sizeof(tmp), "tmp.%d.%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	entry_name(key, name);
	int t = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t < 0)
		return;
	struct iovec iov[2] = {{&h, sizeof(h)}, {p->insns, plen}};
	bool ok = pwritev(t, iov, 2, 0) == (ssize_t)(sizeof(h) + plen);
	close(t);
	if (!ok || renameat(d, tmp, d, name) < 0) {
		(void)unlinkat(d, tmp, 0);
		return;
	}
	cache_prune(d);
}
