/* The egress proxy's connections (internal to sup-proxy.c, pxconn.c,
 * pxio.c and pxtls-conn.c): the budgets, a connection's state, the proxy's
 * table of them, and the helpers every stage of a connection uses. */
#ifndef CORDON_PXCONN_H
#define CORDON_PXCONN_H
#include <netdb.h>
#include <signal.h>
#include <openssl/ssl.h>
#include "cleanup.h"
#include "error.h"
#include "proxy.h"
#include "pxhttp.h"
#include "pxparse.h"
#include "sup-proxy.h"
#include "tls.h"

#define HDR_MAX PROXY_HDR_MAX
/* Pipes start at the kernel's default (64 KiB) and grow, four-fold at a
 * time up to PIPE_MAX, while a transfer keeps them full. Together they may
 * pin at most PIPE_BUDGET of kernel memory, whatever the run does with its
 * PROXY_MAX_CONNS connections: a run that opens many streams and reads none
 * cannot make the supervisor hold more than that. */
#define PIPE_MAX (1u << 20)
#define PIPE_BUDGET (64u << 20)
/* What growth and a connection's default start leave of it: the one-page
 * pipes of every further connection MEM_BUDGET admits (with 61 MiB of
 * pipes counted, about 220 relays in all, 8 KiB of pipes each on 4 KiB
 * pages). Without it, a connection that started at one page per pipe once
 * growth had taken the budget went past it (by 8 KiB a connection; seen on
 * Debian 12's kernel under emulation, where connections opened before
 * their pipes grew). Past even that, a connection is refused (503). */
#define PIPE_RESERVE (3u << 20)
/* Every socket buffer of a relay is fixed as asked for (the kernel doubles
 * it and stops autotuning it): an upstream that sends while the run reads
 * nothing fills 2 x UP_RCVBUF of receive buffer, not the megabytes tcp_rmem
 * would allow. The upstream's receive buffer is the larger one: it is the
 * TCP window of downloads over real round trips (about 300 KiB of window:
 * some 6 MB/s at 50 ms). The client's side is the run's own loopback, and
 * uploads get SOCK_BUF. The sockets' buffers and the pipes together stay
 * within MEM_BUDGET per run: a connection that would not fit is refused
 * (503), a pipe that would not fit does not grow. */
#define UP_RCVBUF (256u << 10)
#define SOCK_BUF (64u << 10)
#define MEM_BUDGET (256u << 20)
/* What one relay's sockets take of it, as the kernel sizes them (twice what
 * was asked), and what it takes at least: that and its two pipes' start. */
#define CONN_SOCK_MEM (2u * (UP_RCVBUF + 3u * SOCK_BUF))
#define CONN_BASE_MEM (CONN_SOCK_MEM + 2u * 65536u)
/* fds the supervisor keeps for itself (outputs, report, cgroup files) out
 * of RLIMIT_NOFILE: the proxy takes at most FDS_PER_CONN per connection
 * from the rest. */
#define FD_RESERVE 256
#define FDS_PER_CONN 6
/* A request that is not complete after this long is refused and recorded. */
#define REQUEST_TIMEOUT_NS (10ULL * 1000000000ULL)
/* An opened TLS connection: two handshakes, each within REQUEST_TIMEOUT_NS
 * of the accept. Each leg's records go through a BIO pair, not the socket
 * (tls.h, tls_fill): two rings of TLS_RING, one each way. Those four rings and
 * what the two SSL objects hold (a record in and out each) count against
 * MEM_BUDGET as TLS_CONN_MEM. */
#define TLS_RING (64u << 10)
#define TLS_CONN_MEM (4u * TLS_RING + (96u << 10))

enum cstate { C_REQUEST, C_RESOLVING, C_CONNECTING, C_HANDSHAKE, C_RELAY, C_DEAD };

struct conn {
	int cfd, ufd;
	int cu[2], uc[2]; /* client->upstream and upstream->client pipes */
	size_t cu_len, uc_len, cu_cap, uc_cap; /* bytes in each pipe, and its size */
	enum cstate st;
	int proto;        /* PROTO_*, as the parser found it */
	int socks_stage;  /* 0: greeting, 1: request */
	char hdr[HDR_MAX];
	size_t hlen;
	char host[256];
	uint16_t port;
	char target[300];
	bool literal;     /* the matching rule names this address literally */
	bool sniff_tls;   /* PROTO_TRANSPARENT: its first byte begins a TLS handshake */
	buf to_up, to_down; /* bytes to send before the spliced stream */
	size_t up_off, down_off;
	bool c_eof, u_eof, u_shut, c_shut;
	uint64_t up, down;
	uint64_t t_accept; /* CLOCK_MONOTONIC ns */
	size_t sock_mem;   /* the socket buffers this relay may fill, in the budget */
	struct gaicb gai;
	struct addrinfo hints;
	struct sigevent sev;
	size_t ep; /* endpoint stats index */
	uint32_t c_ev, u_ev; /* registered interest */
	struct pxhttp *http; /* requests read (plain HTTP): no splice, see on_http */
	/* Opened TLS: the client's leg (our leaf) and the upstream's. */
	bool tls, c_hs, u_hs, u_bad, tls_mem;
	SSL *cssl, *ussl;
	BIO *cnet, *unet;    /* the network ends of their BIO pairs */
	bool c_rd, u_rd;     /* the socket may have bytes (an event since the last EAGAIN) */
	char u_why[160];     /* why the upstream's certificate was not accepted */
};

struct proxy {
	int epfd, lfd;
	strv allow;
	const struct net_rules *rules;
	struct run_report *rep;
	struct conn *c[PROXY_MAX_CONNS];
	size_t nlive, max_conns;
	size_t pipe_bytes; /* the size of all pipes, against PIPE_BUDGET */
	size_t mem;        /* pipes and socket buffers, against MEM_BUDGET */
	int tfd;           /* a 1 s tick: request timeouts, paused accept */
	bool paused;       /* out of fds: the listening socket is not watched */
	bool ticking;      /* the tick is armed (only while it has work) */
	struct proxy_tls tls;
	SSL_CTX *up_ctx;   /* upstream TLS, verified (only with tls.ca) */
	redactor *echo;    /* injected values (and their forms) -> placeholders */
	const strv *resolve; /* network.resolve's pins (transparent only), or NULL */
	struct handoff *handoff; /* transparent connections' way in (sup-handoff.h), or NULL */
};

/* Rounds of pumping per wake-up before other connections get their turn. */
#define RELAY_ROUNDS 16
/* A read connection holds at most this much on its way, each direction. */
#define HTTP_IO_CAP (64u << 10)

/* pxconn.c */
/* The epoll data of a connection's fd: kind 1 the client, 2 the upstream. */
uint64_t px_tag(size_t slot, int kind);
void px_set_interest(struct proxy *px, size_t slot, int fd, uint32_t *cur, uint32_t want, int kind);
void px_tick_arm(struct proxy *px, bool on);
void px_pause_accept(struct proxy *px);
void px_resume_accept(struct proxy *px);
void px_conn_close(struct proxy *px, size_t slot);
void px_say(int fd, const char *s, size_t n);
void px_refuse(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code);
void px_deny(struct proxy *px, size_t slot, const char *why);
void px_deny_malformed(struct proxy *px, size_t slot, const char *why, int socks_code, int http_code);
/* The report's index of target's endpoint stats (added), or SIZE_MAX. */
size_t px_endpoint(struct proxy *px, const char *target);

#endif
