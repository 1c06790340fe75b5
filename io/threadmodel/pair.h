/*
 * io/threadmodel/pair.h — one networking thread and its application
 * thread: the three rings between them, the doorbell, the hand-over of the
 * workspace for synchronous callbacks, and the execution of operations
 * (shared by the networking thread and by the application thread while it
 * holds the workspace).
 *
 * Who touches what:
 *  - the stack workspace and the backend's packet pool: the networking
 *    thread, except while it is parked (see "claim" below);
 *  - ev ring (events): produced by the networking thread, consumed by the
 *    application thread; op ring (operations): the reverse; supply ring
 *    (fresh packets for the application's iip_ops_pkt_alloc): produced by
 *    the networking thread.
 *
 * Synchronous callbacks (accept, accepted, connected) and the application's
 * __app_thread_init need the application's answer before the stack can go
 * on, and applications call the stack directly from them (e.g.
 * iip_tcp_set_nodelay from iip_ops_tcp_accepted).  So for their duration
 * the workspace changes hands: the application thread, on reaching such an
 * event, publishes its operations and raises `claim`; the networking thread
 * executes everything published, raises `parked` and only waits; the
 * application runs the callback "direct" (every call goes straight to the
 * stack and the pool, as in the unified model), writes the answer and
 * bumps `reply_seq`; the networking thread takes the workspace back.
 * Acquire/release on these words orders every access, so no lock exists
 * and ThreadSanitizer sees the hand-over.
 *
 * Handles and closes: an operation queued on a handle may reach the
 * networking thread after the stack reported that connection closed (the
 * application had not seen the event yet) and after the handle's memory
 * was reused by a new connection.  Each operation therefore carries the
 * number of closed events its thread had seen (`stamp`); the networking
 * thread logs the handle of every closed event it queues, and an operation
 * whose handle appears in the log at or after its stamp is stale: dropped,
 * its packet freed.  A handle reused later is only known to the
 * application after that close, so operations on the new connection carry
 * a later stamp and pass.
 */
#ifndef IO_THREADMODEL_PAIR_H
#define IO_THREADMODEL_PAIR_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "ring.h"
#include "bell.h"
#include "msg.h"
#include "opts.h"

#define TM_CLOSE_LOG (16384u) /* closed events remembered for the stale check (power of two) */

struct tm_global;

struct tm_pair {
	struct tm_global *g;
	int model;
	uint16_t index, core_id;
	void *workspace;
	void **net_opaque;           /* the backend's array: [0] backend, [1] tm_global, [2] this pair */
	void *app_opaque[4];         /* the app's view: [0] backend, [1] app global, [2] app thread, [3] pair */

	struct tm_ring ev, op, supply;
	struct tm_msg *ev_slot, *op_slot;
	void **supply_slot;
	struct tm_bell bell;

	/* workspace hand-over (synchronous callbacks) */
	_Alignas(64) _Atomic uint32_t claim, parked;
	_Atomic uint32_t ev_reply_seq;    /* answers to synchronous events */
	uintptr_t ev_reply;
	uint32_t ev_sync_sent;            /* networking thread: synchronous events posted */
	int in_sync_wait;                 /* networking thread: waiting for an answer */
	int direct;                       /* the application thread holds the workspace */
	int servicing;                    /* networking thread: inside tm_net_service */
	uint32_t ev_replies;              /* application thread: synchronous events answered */

	/* synchronous operations (connect, clone) */
	_Alignas(64) _Atomic uint32_t op_reply_seq;
	uintptr_t op_reply;
	uint32_t op_sync_sent;            /* application thread */
	uint32_t alloc_r0;                /* application thread: refill_seq when it ran dry */

	/* supply requests */
	_Atomic uint32_t supply_wanted, refill_seq;

	/* stale handles (networking side; application side: closes_seen) */
	void **close_log;
	uint32_t closes_logged;
	uint32_t closes_seen;             /* application thread */

	/* sends the stack refused for lack of room, retried in order */
	struct tm_msg *def;
	uint32_t def_head, def_n, def_cap;

	/* life cycle */
	_Atomic int app_inited, ready, app_done, abort;
	int shut, started;
	pthread_t th;
	uint8_t mac[IIP_CONF_L2ADDR_LEN_MAX];
	uint32_t ip4_be;
	int64_t clock_offset_ns;
	int net_rt_prio;                  /* the networking thread's SCHED_FIFO/RR priority, 0 if none */          /* backend clock - CLOCK_MONOTONIC_RAW */

	/* counters: networking thread (ev_*, op_*, def_*, drop_*) and application thread (app_*) */
	uint64_t ev_posted, ev_dropped_clone, op_done, def_sends, drop_stale, drop_refused, drop_unknown;
	uint64_t app_events, app_sleeps, app_alloc_waits, app_alloc_fail;
};

struct tm_global {
	struct tm_opts o;
	void *app_global;
	char **app_argv;                  /* the application's section, NULL-terminated */
	_Atomic uint32_t npairs;
	struct tm_pair *_Atomic pairs[TM_MAX_CORES];
};

static inline uint64_t tm_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* the backend's clock minus CLOCK_MONOTONIC_RAW, read on the networking thread */
static int64_t tm_clock_offset(void *net_opaque)
{
	uint32_t t[3];
	uint64_t before = tm_raw_ns(), backend, after;
	iip_ops_util_now_ns(t, net_opaque);
	after = tm_raw_ns();
	backend = (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
	return (int64_t) (backend - (before + (after - before) / 2));
}

static inline void tm_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* ---- deferred operations -------------------------------------------------------- */

static void tm_defer(struct tm_pair *p, const struct tm_msg *m)
{
	if (p->def_n == p->def_cap) {
		uint32_t cap = p->def_cap ? p->def_cap * 2 : 64, i;
		struct tm_msg *d = malloc(sizeof(*d) * cap);
		if (!d) {
			fprintf(stderr, "threadmodel: out of memory for deferred operations\n");
			abort();
		}
		for (i = 0; i < p->def_n; i++)
			d[i] = p->def[(p->def_head + i) % p->def_cap];
		free(p->def);
		p->def = d;
		p->def_cap = cap;
		p->def_head = 0;
	}
	p->def[(p->def_head + p->def_n) % p->def_cap] = *m;
	p->def_n++;
	p->def_sends++;
}

/* ---- stale handles --------------------------------------------------------------- */

static void tm_log_close(struct tm_pair *p, void *handle)
{
	p->close_log[p->closes_logged % TM_CLOSE_LOG] = handle;
	p->closes_logged++;
}

static int tm_stale(struct tm_pair *p, const struct tm_msg *m)
{
	uint32_t i, n = p->closes_logged - m->stamp;
	if (n > TM_CLOSE_LOG) {
		p->drop_unknown++; /* cannot tell any more: never touch a possibly reused handle */
		return 1;
	}
	for (i = m->stamp; i != p->closes_logged; i++)
		if (p->close_log[i % TM_CLOSE_LOG] == m->handle)
			return 1;
	return 0;
}

/* ---- executing operations (networking thread, or the app thread holding the workspace) ---- */

static int tm_is_sync_op(uint8_t kind)
{
	return kind == TM_OP_TCP_CONNECT || kind == TM_OP_PKT_CLONE;
}

/* sends and closes of a connection keep their order; the rest may overtake */
static int tm_is_ordered_op(uint8_t kind)
{
	return kind == TM_OP_TCP_SEND || kind == TM_OP_TCP_CLOSE;
}

/*
 * Executes one operation.  Returns 1 if it must wait: a send the stack has
 * no room for (queue full, no packet wrapper), retried later in order.
 * *answer: the result of a synchronous operation.
 */
static int tm_exec_now(struct tm_pair *p, const struct tm_msg *m, uintptr_t *answer)
{
	uint16_t rc;
	*answer = 0;
	switch (m->kind) {
	case TM_OP_PKT_FREE:
		iip_ops_pkt_free(m->pkt, p->net_opaque);
		break;
	case TM_OP_TCP_SEND:
		if (tm_stale(p, m)) {
			iip_ops_pkt_free(m->pkt, p->net_opaque);
			p->drop_stale++;
			break;
		}
		rc = iip_tcp_send(m->ws, m->handle, m->pkt, m->u16[0], p->net_opaque);
		if (rc == IIP_ERR_QUEUE_FULL || rc == IIP_ERR_NOMEM)
			return 1;
		if (rc) {
			iip_ops_pkt_free(m->pkt, p->net_opaque); /* refused for good (closed): lost as at a close */
			p->drop_refused++;
		}
		break;
	case TM_OP_TCP_CLOSE:
		if (tm_stale(p, m))
			p->drop_stale++;
		else
			iip_tcp_close(m->ws, m->handle, p->net_opaque);
		break;
	case TM_OP_TCP_RXBUF_CONSUMED:
		if (tm_stale(p, m))
			p->drop_stale++;
		else
			iip_tcp_rxbuf_consumed(m->ws, m->handle, m->u16[0], p->net_opaque);
		break;
	case TM_OP_TCP_CONNECT:
		*answer = iip_tcp_connect(m->ws, (uint8_t *) m->local_mac, m->local_ip4_be, m->u16[0],
					  (uint8_t *) m->peer_mac, m->peer_ip4_be, m->u16[1], p->net_opaque);
		break;
	case TM_OP_UDP_SEND:
		if (iip_udp_send(m->ws, (uint8_t *) m->local_mac, m->local_ip4_be, m->u16[0], (uint8_t *) m->peer_mac,
				 m->peer_ip4_be, m->u16[1], m->pkt, p->net_opaque)) {
			iip_ops_pkt_free(m->pkt, p->net_opaque); /* a datagram may be lost */
			p->drop_refused++;
		}
		break;
	case TM_OP_ARP_REQUEST:
		iip_arp_request(m->ws, (uint8_t *) m->local_mac, m->local_ip4_be, m->peer_ip4_be, p->net_opaque);
		break;
	case TM_OP_PKT_CLONE:
		*answer = (uintptr_t) iip_ops_pkt_clone(m->pkt, p->net_opaque);
		break;
	default:
		fprintf(stderr, "threadmodel: internal error: operation kind %u\n", m->kind);
		abort();
	}
	p->op_done++;
	return 0;
}

/* the answer of a synchronous operation goes back to the application thread */
static void tm_reply_op(struct tm_pair *p, uintptr_t answer)
{
	p->op_reply = answer;
	atomic_store_explicit(&p->op_reply_seq, atomic_load_explicit(&p->op_reply_seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* an operation from the ring: behind deferred ones if it is ordered */
static void tm_exec(struct tm_pair *p, const struct tm_msg *m)
{
	uintptr_t answer;
	if (p->def_n && tm_is_ordered_op(m->kind)) {
		tm_defer(p, m);
		return;
	}
	if (tm_exec_now(p, m, &answer))
		tm_defer(p, m);
	else if (tm_is_sync_op(m->kind))
		tm_reply_op(p, answer);
}

/* retries deferred operations in order, until a send is refused again */
static void tm_retry_deferred(struct tm_pair *p)
{
	while (p->def_n) {
		struct tm_msg *m = &p->def[p->def_head];
		uintptr_t answer;
		if (tm_exec_now(p, m, &answer))
			return;
		if (tm_is_sync_op(m->kind))
			tm_reply_op(p, answer);
		p->def_head = (p->def_head + 1) % p->def_cap;
		p->def_n--;
	}
}

#endif
