/*
 * io/threadmodel/app.h — the application thread's side: the stand-ins the
 * application calls instead of the stack's API and the packet pool
 * (stack_view.h renames them), the delivery of events to the
 * application's callbacks, and the application thread's loop.
 *
 * Packets: the application never touches the backend's pool, which is not
 * thread-safe (io/common/pkt.h).  iip_ops_pkt_alloc takes a packet the
 * networking thread allocated beforehand (the supply ring, topped up every
 * iteration); iip_ops_pkt_free queues the packet back; iip_ops_pkt_clone
 * asks the networking thread and waits.  Reading and writing a packet's
 * bytes and length (get_data, set_len, ...) stays direct: only the thread
 * that holds the packet touches its descriptor.  While the application
 * thread holds the workspace (synchronous callbacks, __app_thread_init),
 * everything is direct, as in the unified model.
 *
 * Return values: the asynchronous calls (send, close, rxbuf_consumed,
 * udp_send, arp_request) return 0 once queued; the networking thread
 * retries a send the stack has no room for, in order, and frees the packet
 * of a send the stack refuses for good (the connection is closing, which
 * the application learns from iip_ops_tcp_closed).  iip_tcp_connect waits
 * for the stack's own return value.
 */
#ifndef IO_THREADMODEL_APP_H
#define IO_THREADMODEL_APP_H

static inline struct tm_pair *tm_app_pair(void *opaque)
{
	return (struct tm_pair *) ((void **) opaque)[3];
}

static inline int tm_aborted(struct tm_pair *p)
{
	return atomic_load_explicit(&p->abort, memory_order_relaxed);
}

/* waits until ready(p): split spins, merge sleeps until the networking thread
 * ends an iteration or has news; -1 if the layer is being torn down */
static int tm_app_wait(struct tm_pair *p, int (*ready)(struct tm_pair *))
{
	for (;;) {
		if (ready(p))
			return 0;
		if (tm_aborted(p))
			return -1;
		if (p->model == TM_MERGE) {
			uint32_t seq = tm_bell_prepare(&p->bell, TM_SLEEPING_TICK);
			if (!ready(p) && !tm_aborted(p))
				tm_bell_wait(&p->bell, seq, p->g->o.wait_us);
			tm_bell_done(&p->bell);
		} else {
			tm_relax();
		}
	}
}

static int tm_app_op_room(struct tm_pair *p)
{
	return tm_ring_reserve(&p->op) >= 0;
}

static int tm_app_op_answered(struct tm_pair *p)
{
	return atomic_load_explicit(&p->op_reply_seq, memory_order_acquire) == p->op_sync_sent;
}

static int tm_app_parked(struct tm_pair *p)
{
	return atomic_load_explicit(&p->parked, memory_order_acquire) != 0;
}

static int tm_app_ready(struct tm_pair *p)
{
	return atomic_load_explicit(&p->ready, memory_order_acquire) != 0;
}

static int tm_app_supplied(struct tm_pair *p)
{
	return tm_ring_peek(&p->supply) >= 0 ||
	       atomic_load_explicit(&p->refill_seq, memory_order_acquire) - p->alloc_r0 >= 2;
}

/*
 * Hands an operation to the networking thread (or executes it, while this
 * thread holds the workspace).  Returns the answer of a synchronous
 * operation, 0 for the others, `fail` if the layer is being torn down.
 */
static uintptr_t tm_app_submit(struct tm_pair *p, const struct tm_msg *m, uintptr_t fail)
{
	int64_t i;
	if (p->direct) {
		uintptr_t answer = 0;
		if (tm_is_sync_op(m->kind))
			tm_exec_now(p, m, &answer);
		else
			tm_exec(p, m);
		return answer;
	}
	if ((i = tm_ring_reserve(&p->op)) < 0) {
		tm_ring_publish(&p->op);
		if (tm_app_wait(p, tm_app_op_room))
			return fail;
		i = tm_ring_reserve(&p->op);
	}
	p->op_slot[i] = *m;
	tm_ring_commit(&p->op);
	if (tm_is_sync_op(m->kind)) {
		p->op_sync_sent++;
		tm_ring_publish(&p->op);
		if (tm_app_wait(p, tm_app_op_answered))
			return fail;
		return p->op_reply;
	}
	if (tm_ring_unpublished(&p->op) >= p->g->o.batch)
		tm_ring_publish(&p->op);
	return 0;
}

/* ---- the stand-ins (stack_view.h points the application's calls here) ------------ */

static __iip_unused_fn uint16_t tm_app_tcp_send(void *ws, void *handle, void *pkt, uint16_t tcp_flags, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED)
		return iip_tcp_send(ws, handle, pkt, tcp_flags, p->net_opaque);
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_TCP_SEND;
	m.ws = ws;
	m.handle = handle;
	m.pkt = pkt;
	m.u16[0] = tcp_flags;
	m.stamp = p->closes_seen;
	return (uint16_t) tm_app_submit(p, &m, IIP_ERR_NOMEM);
}

static __iip_unused_fn uint16_t tm_app_tcp_close(void *ws, void *handle, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED)
		return iip_tcp_close(ws, handle, p->net_opaque);
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_TCP_CLOSE;
	m.ws = ws;
	m.handle = handle;
	m.stamp = p->closes_seen;
	return (uint16_t) tm_app_submit(p, &m, IIP_ERR_STATE);
}

static __iip_unused_fn void tm_app_tcp_rxbuf_consumed(void *ws, void *handle, uint16_t cnt, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED) {
		iip_tcp_rxbuf_consumed(ws, handle, cnt, p->net_opaque);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_TCP_RXBUF_CONSUMED;
	m.ws = ws;
	m.handle = handle;
	m.u16[0] = cnt;
	m.stamp = p->closes_seen;
	tm_app_submit(p, &m, 0);
}

static __iip_unused_fn uint16_t tm_app_tcp_connect(void *ws, uint8_t local_mac[], uint32_t local_ip4_be,
						   uint16_t local_port_be, uint8_t peer_mac[], uint32_t peer_ip4_be,
						   uint16_t peer_port_be, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED)
		return iip_tcp_connect(ws, local_mac, local_ip4_be, local_port_be, peer_mac, peer_ip4_be,
				       peer_port_be, p->net_opaque);
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_TCP_CONNECT;
	m.ws = ws;
	memcpy(m.local_mac, local_mac, sizeof(m.local_mac));
	memcpy(m.peer_mac, peer_mac, sizeof(m.peer_mac));
	m.local_ip4_be = local_ip4_be;
	m.peer_ip4_be = peer_ip4_be;
	m.u16[0] = local_port_be;
	m.u16[1] = peer_port_be;
	return (uint16_t) tm_app_submit(p, &m, IIP_ERR_NOMEM);
}

static __iip_unused_fn uint16_t tm_app_udp_send(void *ws, uint8_t local_mac[], uint32_t local_ip4_be,
						uint16_t local_port_be, uint8_t peer_mac[], uint32_t peer_ip4_be,
						uint16_t peer_port_be, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED)
		return iip_udp_send(ws, local_mac, local_ip4_be, local_port_be, peer_mac, peer_ip4_be, peer_port_be,
				    pkt, p->net_opaque);
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_UDP_SEND;
	m.ws = ws;
	m.pkt = pkt;
	memcpy(m.local_mac, local_mac, sizeof(m.local_mac));
	memcpy(m.peer_mac, peer_mac, sizeof(m.peer_mac));
	m.local_ip4_be = local_ip4_be;
	m.peer_ip4_be = peer_ip4_be;
	m.u16[0] = local_port_be;
	m.u16[1] = peer_port_be;
	return (uint16_t) tm_app_submit(p, &m, IIP_ERR_NOMEM);
}

static __iip_unused_fn void tm_app_arp_request(void *ws, uint8_t local_mac[], uint32_t local_ip4_be,
					       uint32_t target_ip4_be, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED) {
		iip_arp_request(ws, local_mac, local_ip4_be, target_ip4_be, p->net_opaque);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_ARP_REQUEST;
	m.ws = ws;
	memcpy(m.local_mac, local_mac, sizeof(m.local_mac));
	m.local_ip4_be = local_ip4_be;
	m.peer_ip4_be = target_ip4_be;
	tm_app_submit(p, &m, 0);
}

static __iip_unused_fn void *tm_app_pkt_alloc(void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	int64_t i;
	void *pkt;
	if (p->model == TM_UNIFIED || p->direct)
		return iip_ops_pkt_alloc(p->net_opaque);
	if ((i = tm_ring_peek(&p->supply)) < 0) {
		/* ran dry: wait for a refill that started after we asked (two passes) */
		p->app_alloc_waits++;
		tm_ring_publish(&p->op); /* packets we gave back may be what it needs */
		p->alloc_r0 = atomic_load_explicit(&p->refill_seq, memory_order_acquire);
		atomic_store_explicit(&p->supply_wanted, 1, memory_order_release);
		tm_app_wait(p, tm_app_supplied);
		atomic_store_explicit(&p->supply_wanted, 0, memory_order_relaxed);
		if ((i = tm_ring_peek(&p->supply)) < 0) {
			p->app_alloc_fail++;
			return NULL; /* the pool is empty: as the backend's own alloc would say */
		}
	}
	pkt = p->supply_slot[i];
	tm_ring_release(&p->supply);
	return pkt;
}

static __iip_unused_fn void tm_app_pkt_free(void *pkt, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED || p->direct) {
		iip_ops_pkt_free(pkt, p->net_opaque);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_PKT_FREE;
	m.pkt = pkt;
	tm_app_submit(p, &m, 0);
}

static __iip_unused_fn void *tm_app_pkt_clone(void *pkt, void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	struct tm_msg m;
	if (p->model == TM_UNIFIED || p->direct)
		return iip_ops_pkt_clone(pkt, p->net_opaque);
	memset(&m, 0, sizeof(m));
	m.kind = TM_OP_PKT_CLONE;
	m.pkt = pkt;
	return (void *) tm_app_submit(p, &m, 0);
}

#ifdef THREADMODEL_APP_CLOCK
static __iip_unused_fn void tm_app_util_now_ns(uint32_t t[3], void *opaque)
{
	struct tm_pair *p = tm_app_pair(opaque);
	uint64_t now, s;
	if (p->model == TM_UNIFIED) {
		iip_ops_util_now_ns(t, p->net_opaque);
		return;
	}
	now = tm_raw_ns() + (uint64_t) p->clock_offset_ns;
	s = now / 1000000000ull;
	t[0] = (uint32_t) (s >> 32);
	t[1] = (uint32_t) s;
	t[2] = (uint32_t) (now % 1000000000ull);
}
#endif

/* ---- events ------------------------------------------------------------------------- */

/* accept / accepted / connected: take the workspace, run the callback as in unified */
static void tm_app_sync_event(struct tm_pair *p, const struct tm_msg *m)
{
	void *o = p->app_opaque;
	uintptr_t answer = 0;
	tm_ring_publish(&p->op); /* executed before the hand-over: order kept */
	atomic_store_explicit(&p->claim, 1, memory_order_seq_cst);
	if (tm_app_wait(p, tm_app_parked))
		return;
	p->direct = 1;
	switch (m->kind) {
	case TM_EV_TCP_ACCEPT:
		answer = tm_inner_ops_tcp_accept(m->ws, m->pkt, o);
		break;
	case TM_EV_TCP_ACCEPTED:
		answer = (uintptr_t) tm_inner_ops_tcp_accepted(m->ws, m->handle, m->pkt, o);
		break;
	default:
		answer = (uintptr_t) tm_inner_ops_tcp_connected(m->ws, m->handle, m->pkt, o);
		break;
	}
	iip_ops_pkt_free(m->pkt, p->net_opaque);
	p->direct = 0;
	p->ev_reply = answer;
	atomic_store_explicit(&p->claim, 0, memory_order_relaxed);
	atomic_store_explicit(&p->ev_reply_seq, ++p->ev_replies, memory_order_release);
}

static void tm_app_event(struct tm_pair *p, const struct tm_msg *m)
{
	void *o = p->app_opaque;
	p->app_events++;
	switch (m->kind) {
	case TM_EV_ARP_REPLY:
		tm_inner_ops_arp_reply(m->ws, m->pkt, o);
		break;
	case TM_EV_ICMP_REPLY:
		tm_inner_ops_icmp_reply(m->ws, m->pkt, o);
		break;
	case TM_EV_TCP_ACCEPT:
	case TM_EV_TCP_ACCEPTED:
	case TM_EV_TCP_CONNECTED:
		tm_app_sync_event(p, m);
		return; /* its clone is freed already */
	case TM_EV_TCP_PAYLOAD:
		tm_inner_ops_tcp_payload(m->ws, m->handle, m->pkt, m->tcp_opaque, m->u16[0], m->u16[1], o);
		break;
	case TM_EV_TCP_ACKED:
		tm_inner_ops_tcp_acked(m->ws, m->handle, m->pkt, m->tcp_opaque, o);
		break;
	case TM_EV_TCP_CLOSED:
		p->closes_seen++; /* before the callback: the handle is dead from here on */
		tm_inner_ops_tcp_closed(m->handle, (uint8_t *) m->local_mac, m->local_ip4_be, m->u16[0],
					(uint8_t *) m->peer_mac, m->peer_ip4_be, m->u16[1], m->tcp_opaque, o);
		return;
	case TM_EV_UDP_PAYLOAD:
		tm_inner_ops_udp_payload(m->ws, m->pkt, o);
		break;
	default:
		fprintf(stderr, "threadmodel: internal error: event kind %u\n", m->kind);
		abort();
	}
	tm_app_pkt_free(m->pkt, o); /* the clone goes back to the networking thread */
}

/* delivers what is visible, at most one ring's worth so __app_loop runs regularly */
static uint32_t tm_app_deliver(struct tm_pair *p)
{
	uint32_t n = 0;
	int64_t i;
	while (n <= p->ev.mask && (i = tm_ring_peek(&p->ev)) >= 0) {
		struct tm_msg m = p->ev_slot[i];
		tm_ring_release(&p->ev);
		tm_app_event(p, &m);
		n++;
	}
	return n;
}

/*
 * merge: above the networking thread, so that a woken application thread
 * runs at once and keeps the core while it has work.  If the networking
 * thread is real-time itself, one level above it (equal FIFO priorities on
 * one core would let the polling networking thread starve it).
 */
static void tm_app_set_priority(struct tm_pair *p)
{
	static _Atomic int warned;
	struct sched_param sp;
	int rc, prio = p->g->o.fifo_prio;
	if (p->model != TM_MERGE)
		return;
	if (p->net_rt_prio) {
		if (!prio && !atomic_exchange(&warned, 1))
			fprintf(stderr, "threadmodel: warning: -r 0 but the networking thread is real-time (priority %d): "
					"raising the application thread above it anyway\n", p->net_rt_prio);
		if (prio <= p->net_rt_prio)
			prio = p->net_rt_prio < sched_get_priority_max(SCHED_FIFO) ? p->net_rt_prio + 1 : p->net_rt_prio;
	}
	if (!prio)
		return;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = prio;
	rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc && !atomic_exchange(&warned, 1))
		fprintf(stderr, "threadmodel: warning: cannot give the application thread SCHED_FIFO priority %d (%s); "
				"merge runs with equal priorities (-r 0 silences this)\n", prio, strerror(rc));
	else if (!rc && p->net_rt_prio >= prio && !atomic_exchange(&warned, 1))
		fprintf(stderr, "threadmodel: warning: the networking thread has the highest real-time priority: "
				"merge cannot put the application thread above it\n");
}

static void *tm_app_thread(void *arg)
{
	struct tm_pair *p = (struct tm_pair *) arg;
	char name[16];
	snprintf(name, sizeof(name), "iip-app%u", p->index);
	pthread_setname_np(pthread_self(), name);
	tm_app_set_priority(p);
	/* the networking thread waits for us: the workspace is ours */
	p->direct = 1;
	p->app_opaque[2] = tm_inner_app_thread_init(p->workspace, p->core_id, p->app_opaque);
	p->direct = 0;
	atomic_store_explicit(&p->app_inited, 1, memory_order_release);
	if (tm_app_wait(p, tm_app_ready))
		goto out;
	for (;;) {
		uint32_t n = tm_app_deliver(p), next_us = p->g->o.wait_us;
		tm_inner_app_loop(p->workspace, p->mac, p->ip4_be, &next_us, p->app_opaque);
		tm_ring_publish(&p->op);
		if (tm_inner_app_should_stop(p->app_opaque) || tm_aborted(p))
			break;
		if (n)
			continue;
		if (p->model == TM_MERGE) {
			/* nothing came: sleep until events (or, if __app_loop wants to run
			 * again at once, until the networking thread ends an iteration) */
			uint32_t seq = tm_bell_prepare(&p->bell, next_us ? TM_SLEEPING : TM_SLEEPING_TICK);
			if (!tm_ring_has_visible(&p->ev) && !tm_aborted(p)) {
				p->app_sleeps++;
				tm_bell_wait(&p->bell, seq, next_us && next_us < p->g->o.wait_us ? next_us : p->g->o.wait_us);
			}
			tm_bell_done(&p->bell);
		} else {
			tm_relax();
		}
	}
out:
	atomic_store_explicit(&p->app_done, 1, memory_order_release);
	return NULL;
}

#endif
