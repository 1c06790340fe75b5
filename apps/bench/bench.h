/*
 * apps/bench/bench.h — state shared by the client and the server sides of
 * the benchmark, and the mechanisms both use: the clock, per-thread
 * counters (printed by one thread, no lock on the fast path), the walk over
 * a received payload that may be a chain, payload verification, and the TCP
 * sender that cuts a message into MSS-sized packets.
 *
 * Included by main.c after the stack (it uses iip_* and PB_*), before the
 * backend.
 */
#ifndef APPS_BENCH_BENCH_H
#define APPS_BENCH_BENCH_H

#include <signal.h>
#include <stdatomic.h>

#include "opts.h"
/* the Linux baseline's histogram and per-second report: the same code, so
 * the same percentiles and the same lines for both (plots compare them) */
#include "../linux_baseline/latency_hist.h"
#include "../linux_baseline/stats.h"

#define BENCH_MAX_THREADS (256)
#define BENCH_ARP_RETRY_NS (200000000ull) /* 200 ms between ARP requests */
#define BENCH_ARP_TRIES (50)
#define BENCH_GRACE_NS (3000000000ull)    /* wait for closes at the end, at most */
#define BENCH_UDP_LOSS_NS (1000000000ull) /* a UDP request unanswered this long is lost */
#define BENCH_PORT_FIRST (1024u)
#define BENCH_PORT_COUNT (65536u - BENCH_PORT_FIRST)

/* provided by every backend (COMPAT.md section 3) */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque);

/* SIGINT / SIGTERM: end the run as if the duration had passed */
static volatile sig_atomic_t bench_signalled;

enum bench_conn_state {
	BENCH_C_IDLE,       /* client: not connected yet */
	BENCH_C_CONNECTING,
	BENCH_C_OPEN,
	BENCH_C_CLOSING,    /* iip_tcp_close called */
	BENCH_C_CLOSED,     /* iip_ops_tcp_closed seen */
	BENCH_C_FAILED,     /* never connected */
};

struct bench_thread;

/* one TCP connection or UDP flow (client), or one accepted connection (server) */
struct bench_conn {
	struct bench_thread *t;
	void *handle;                /* TCP: the stack's handle once connected */
	uint16_t local_port_be;
	uint16_t peer_port_be;       /* server: the client's port (UDP replies) */
	uint16_t mss;                /* largest packet we hand to iip_tcp_send */
	uint8_t state;
	uint8_t is_stop;             /* the remote-stop connection */
	uint8_t peer_fin;            /* the peer closed its direction */
	uint8_t on_todo, waiting;    /* on the thread's todo list / token queue */
	uint8_t reply_bad;           /* client: the reply being received differs */
	uint32_t credits;            /* writes owed (granted, not completely queued) */
	uint32_t write_off;          /* bytes of the current write already queued */
	uint64_t unacked;            /* TCP bytes queued and not yet acknowledged */
	uint32_t outstanding;        /* client ping-pong: requests sent, reply pending */
	uint32_t sent_head;          /* ring of send times, oldest first */
	uint64_t *sent_ns;           /* client ping-pong: depth entries */
	uint32_t rx_fill;            /* client: bytes of the current reply received */
	uint64_t rx_stream;          /* server -x: request bytes received (stream offset) */
	uint32_t rx_acc;             /* server -q: bytes of the current request */
	struct bench_conn *todo_next, *wait_next;
	struct bench_conn *prev, *next; /* server: live connections of the thread */
};

struct bench_global;

struct bench_thread {
	struct bench_global *g;
	uint16_t core_id;            /* what the backend called us with */
	uint32_t index;              /* our order among this app's threads: [index] in the report */
	struct bl_counters *ctr;     /* g->counters[index] */
	struct bl_hist *hist;
	void *workspace;
	uint8_t mac[6];
	uint32_t ip4_be;
	int phase;
	uint64_t phase_ns;           /* when the phase began */
	/* client */
	struct bench_conn *conns;    /* -c connections / flows */
	uint32_t *port_conn;         /* local port -> conns index + 1 */
	uint32_t connected, failed, closed;
	int affinity_any;            /* the backend maps no port to us: any port will do */
	uint32_t arp_tries;
	uint64_t arp_last_ns;
	uint64_t next_token_ns;      /* -r: when the next request may start */
	uint64_t next_loss_check_ns;
	struct bench_conn stop_conn; /* -k */
	/* server */
	struct bench_conn *live;     /* accepted connections */
	struct bench_conn *free_conns;
	uint32_t nlive;
	int stop_seen;               /* this thread reacted to the global stop */
	/* both */
	struct bench_conn *todo;     /* connections with work for __app_loop */
	struct bench_conn *wait_head, *wait_tail; /* waiting for a -r token */
	uint64_t requests, bad_replies, unexpected_bytes, lost, checked_bytes, bad_bytes;
	uint64_t accepted, answered, tx_refused;
	char pad[64];
};

struct bench_global {
	struct bench_opts o;
	_Atomic uint32_t nthreads;
	struct bench_thread *_Atomic threads[BENCH_MAX_THREADS];
	struct bl_counters counters[BENCH_MAX_THREADS];
	struct bl_snapshot prev[BENCH_MAX_THREADS];
	uint64_t next_print_ns, last_print_ns;   /* printer thread only */
	_Atomic uint64_t start_ns;               /* first __app_loop; 0 = not yet */
	_Atomic uint64_t end_ns;                 /* client: when the run ended */
	_Atomic int server_mac_known;
	uint8_t server_mac[6];
	_Atomic int stop_requested;              /* server: remote stop or -t */
	_Atomic uint32_t port_cursor;
	_Atomic uint32_t threads_done;
	_Atomic int fatal;
	_Atomic uint64_t last_now_ns;             /* thread 0's clock at its last loop */
};

static inline struct bench_global *bench_g(void *opaque)
{
	return (struct bench_global *) ((void **) opaque)[1];
}

static inline struct bench_thread *bench_t(void *opaque)
{
	return (struct bench_thread *) ((void **) opaque)[2];
}

static inline uint64_t bench_now(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

static inline void bench_wake_at(uint32_t *next_us, uint64_t now, uint64_t at)
{
	uint64_t us = at > now ? (at - now + 999) / 1000 : 0;
	if (us < *next_us)
		*next_us = (uint32_t) us;
}

/* ---- lists -------------------------------------------------------------------------- */

/* work for __app_loop: a send that failed for lack of buffers, a close */
static inline void bench_todo_push(struct bench_conn *c)
{
	if (c->on_todo)
		return;
	c->on_todo = 1;
	c->todo_next = c->t->todo;
	c->t->todo = c;
}

static inline void bench_wait_push(struct bench_conn *c)
{
	struct bench_thread *t = c->t;
	if (c->waiting)
		return;
	c->waiting = 1;
	c->wait_next = NULL;
	if (t->wait_tail)
		t->wait_tail->wait_next = c;
	else
		t->wait_head = c;
	t->wait_tail = c;
}

static inline struct bench_conn *bench_wait_pop(struct bench_thread *t)
{
	struct bench_conn *c = t->wait_head;
	if (c) {
		t->wait_head = c->wait_next;
		if (!t->wait_head)
			t->wait_tail = NULL;
		c->waiting = 0;
	}
	return c;
}

/* ---- received payload: a packet or a chain (LRO, reassembly) ------------------------ */

struct bench_span_it {
	void *seg;
	uint32_t skip;  /* bytes still to skip from the current segment's data */
	uint32_t left;  /* payload bytes still to hand out */
};

/* payload starts at `payload` (inside the first segment) + head_off */
static inline void bench_span_init(struct bench_span_it *it, void *pkt, const uint8_t *payload, uint32_t head_off,
				   uint32_t len, void *opaque)
{
	it->seg = pkt;
	it->skip = (uint32_t) (payload - (const uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + head_off;
	it->left = len;
}

static inline int bench_span_next(struct bench_span_it *it, const uint8_t **p, uint32_t *n, void *opaque)
{
	while (it->seg && it->left) {
		uint32_t len = iip_ops_pkt_get_len(it->seg, opaque);
		const uint8_t *d = (const uint8_t *) iip_ops_pkt_get_data(it->seg, opaque);
		void *seg = it->seg;
		it->seg = iip_ops_pkt_scatter_gather_chain_get_next(seg, opaque);
		if (it->skip >= len) {
			it->skip -= len;
			continue;
		}
		*p = d + it->skip;
		*n = len - it->skip < it->left ? len - it->skip : it->left;
		it->skip = 0;
		it->left -= *n;
		return 1;
	}
	return 0;
}

/* compares n received bytes with the message m starting at offset off (wrapping) */
static inline int bench_matches(const struct bench_msg *m, uint64_t off, const uint8_t *p, uint32_t n)
{
	uint32_t pos = (uint32_t) (off % m->len);
	while (n) {
		uint32_t k = m->len - pos < n ? m->len - pos : n;
		if (memcmp(m->bytes + pos, p, k))
			return 0;
		p += k;
		n -= k;
		pos = 0;
	}
	return 1;
}

/* ---- sending over TCP ------------------------------------------------------------- */

static void bench_client_started_request(struct bench_conn *c, void *opaque);
static int bench_client_wants_write(struct bench_conn *c);
static int bench_take_token(struct bench_conn *c, void *opaque);

/*
 * Queues as much of the connection's owed writes as the stack takes.  A
 * write (a request, a reply, a burst write) is the whole message, cut into
 * packets of at most the MSS so that each packet is one segment on the
 * wire (zero copy with scatter-gather).  Burst mode keeps at most depth x
 * message bytes unacknowledged; iip_ops_tcp_acked calls this again.  On a
 * refusal the packet is freed and the same bytes are tried again from
 * __app_loop.
 */
static void bench_tcp_pump(struct bench_conn *c, void *opaque)
{
	struct bench_thread *t = c->t;
	const struct bench_opts *o = &t->g->o;
	const struct bench_msg *m = &o->msg;
	uint64_t budget = (uint64_t) o->depth * m->len;
	while (c->state == BENCH_C_OPEN && !c->peer_fin) {
		uint32_t n;
		uint16_t rc;
		void *pkt;
		if (c->write_off == 0 && c->credits == 0) {
			if (!o->client || !bench_client_wants_write(c) || !bench_take_token(c, opaque))
				return;
			c->credits = 1;
		}
		n = m->len - c->write_off < c->mss ? m->len - c->write_off : c->mss;
		if (o->mode == BENCH_BURST && o->client && c->unacked && c->unacked + n > budget)
			return; /* iip_ops_tcp_acked resumes */
		pkt = iip_ops_pkt_alloc(opaque);
		if (!pkt) {
			bench_todo_push(c);
			return;
		}
		memcpy(iip_ops_pkt_get_data(pkt, opaque), m->bytes + c->write_off, n);
		iip_ops_pkt_set_len(pkt, (uint16_t) n, opaque);
		rc = iip_tcp_send(t->workspace, c->handle, pkt,
				  c->write_off + n == m->len ? IIP_TCP_FLAG_PSH : 0, opaque);
		if (rc) {
			iip_ops_pkt_free(pkt, opaque); /* refused: still ours */
			t->tx_refused++;
			if (rc != IIP_ERR_STATE)
				bench_todo_push(c);
			return;
		}
		if (c->write_off == 0 && o->client && o->mode == BENCH_PINGPONG)
			bench_client_started_request(c, opaque);
		c->unacked += n;
		c->write_off += n;
		bl_count(&t->ctr->tx_bytes, n);
		if (c->write_off == m->len) {
			c->write_off = 0;
			c->credits--;
			bl_count(&t->ctr->tx_ops, 1);
		}
	}
}

/* the largest packet for this connection: its MSS (one segment each) */
static inline uint16_t bench_conn_mss(void *workspace, void *handle)
{
	struct iip_tcp_info info;
	iip_tcp_get_info(workspace, handle, &info);
	return info.snd_mss ? info.snd_mss : 536; /* RFC 9293 default */
}

#endif
