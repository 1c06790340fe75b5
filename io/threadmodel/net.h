/*
 * io/threadmodel/net.h — the networking thread's side: the stack's event
 * callbacks (cloning packets into events for the application thread), the
 * execution of the application's operations, the supply of fresh packets,
 * and the contract functions the real backend calls (__app_init,
 * __app_thread_init, __app_loop, __app_should_stop, __app_exit), which
 * start, feed and stop the application threads.
 *
 * In the unified model every function here is a pass-through to the
 * application's own, called on the networking thread.
 */
#ifndef IO_THREADMODEL_NET_H
#define IO_THREADMODEL_NET_H

static void *tm_app_thread(void *arg);

static inline struct tm_pair *tm_net_pair(void *opaque)
{
	return (struct tm_pair *) ((void **) opaque)[2];
}

/* the application thread will not answer any more: it stopped, or we tear down */
static inline int tm_net_app_gone(struct tm_pair *p)
{
	return atomic_load_explicit(&p->abort, memory_order_relaxed) ||
	       atomic_load_explicit(&p->app_done, memory_order_acquire);
}

/* ---- rings, seen from the networking thread -------------------------------------- */

static void tm_net_publish(struct tm_pair *p)
{
	if (tm_ring_publish(&p->ev) && p->model == TM_MERGE)
		tm_bell_ring(&p->bell);
}

/* keeps `-a` fresh packets ready for the application's iip_ops_pkt_alloc */
static void tm_net_refill(struct tm_pair *p)
{
	uint32_t have = p->supply.prod - atomic_load_explicit(&p->supply.tail, memory_order_acquire);
	while (have < p->g->o.supply) {
		int64_t i = tm_ring_reserve(&p->supply);
		void *pkt;
		if (i < 0 || !(pkt = iip_ops_pkt_alloc(p->net_opaque)))
			break;
		p->supply_slot[i] = pkt;
		tm_ring_commit(&p->supply);
		have++;
	}
	tm_ring_publish(&p->supply);
	if (atomic_load_explicit(&p->supply_wanted, memory_order_acquire))
		atomic_fetch_add_explicit(&p->refill_seq, 1, memory_order_release);
}

/*
 * Waiting for the application thread from inside an operation (the stack
 * called us back while executing one, and the event ring is full): no
 * stack call may be made here, so operations are only moved aside, in
 * order, except packet returns and clones, which touch the pool only.
 * Without this, the application blocked on a full operation ring and we
 * blocked on a full event ring would wait for each other.
 */
static void tm_net_absorb(struct tm_pair *p)
{
	int64_t i;
	while ((i = tm_ring_peek(&p->op)) >= 0) {
		struct tm_msg m = p->op_slot[i];
		uintptr_t answer;
		tm_ring_release(&p->op);
		if (m.kind == TM_OP_PKT_FREE || m.kind == TM_OP_PKT_CLONE) {
			tm_exec_now(p, &m, &answer);
			if (m.kind == TM_OP_PKT_CLONE)
				tm_reply_op(p, answer);
		} else {
			tm_defer(p, &m);
		}
	}
}

/* executes what the application thread asked for; returns how many operations */
static uint32_t tm_net_service(struct tm_pair *p)
{
	uint32_t n = 0;
	int64_t i;
	if (p->servicing) {
		tm_net_absorb(p);
		return 0;
	}
	p->servicing = 1;
	while ((i = tm_ring_peek(&p->op)) >= 0) {
		struct tm_msg m = p->op_slot[i];
		tm_ring_release(&p->op); /* copied: the slot is free for the producer again */
		tm_exec(p, &m);
		n++;
	}
	if (p->def_n)
		tm_retry_deferred(p);
	tm_net_refill(p);
	p->servicing = 0;
	return n;
}

/* one step of waiting for the application thread: keep serving it */
static void tm_net_wait_step(struct tm_pair *p)
{
	tm_net_service(p);
	if (p->model == TM_MERGE) {
		if (tm_bell_sleeper(&p->bell))
			tm_bell_ring(&p->bell);
		sched_yield(); /* same core: let it run (it has the higher priority when -r > 0) */
	} else {
		tm_relax();
	}
}

/* a free event slot; NULL when the layer is stopping */
static struct tm_msg *tm_net_slot(struct tm_pair *p)
{
	int64_t i;
	while ((i = tm_ring_reserve(&p->ev)) < 0) {
		if (p->direct || tm_net_app_gone(p))
			return NULL; /* the consumer is the caller itself / gone */
		tm_net_publish(p);
		tm_net_wait_step(p);
	}
	return &p->ev_slot[i];
}

static void tm_net_post(struct tm_pair *p)
{
	tm_ring_commit(&p->ev);
	p->ev_posted++;
	if (tm_ring_unpublished(&p->ev) >= p->g->o.batch)
		tm_net_publish(p);
}

/* the stack frees its packet after the callback: the application gets a clone */
static void *tm_net_clone(struct tm_pair *p, void *pkt)
{
	void *c = iip_ops_pkt_clone(pkt, p->net_opaque);
	if (!c && !p->servicing && !p->direct) {
		tm_net_service(p); /* packets the application returned may be waiting */
		c = iip_ops_pkt_clone(pkt, p->net_opaque);
	}
	if (!c)
		p->ev_dropped_clone++;
	return c;
}

/* posts an event carrying a clone of pkt; 0 when it could not (dropped, counted) */
static int tm_net_post_pkt(struct tm_pair *p, uint8_t kind, void *ws, void *handle, void *pkt, void *tcp_opaque,
			   uint16_t head_off, uint16_t tail_off)
{
	struct tm_msg *m;
	void *c = tm_net_clone(p, pkt);
	if (!c)
		return 0;
	if (!(m = tm_net_slot(p))) {
		iip_ops_pkt_free(c, p->net_opaque);
		p->ev_dropped_clone++;
		return 0;
	}
	m->kind = kind;
	m->ws = ws;
	m->handle = handle;
	m->pkt = c;
	m->tcp_opaque = tcp_opaque;
	m->u16[0] = head_off;
	m->u16[1] = tail_off;
	tm_net_post(p);
	return 1;
}

/*
 * A synchronous event: the stack needs the application's answer now.
 * Publish, keep serving the application thread until it claims the
 * workspace, hand it over (only wait), take it back with the answer.
 */
static uintptr_t tm_net_sync(struct tm_pair *p)
{
	uint32_t want;
	if (p->in_sync_wait) {
		fprintf(stderr, "threadmodel: internal error: nested synchronous event\n");
		abort();
	}
	p->in_sync_wait = 1;
	want = ++p->ev_sync_sent;
	tm_net_publish(p);
	if (p->model == TM_MERGE)
		tm_bell_ring(&p->bell);
	for (;;) {
		if (tm_net_app_gone(p)) {
			p->ev_reply = 0; /* e.g. a SYN after the application decided to stop: refused */
			break;
		}
		if (atomic_load_explicit(&p->claim, memory_order_acquire)) {
			/* everything it published before claiming is executed first: order kept */
			tm_net_service(p);
			atomic_store_explicit(&p->parked, 1, memory_order_release);
			if (p->model == TM_MERGE)
				tm_bell_ring(&p->bell);
			while (atomic_load_explicit(&p->ev_reply_seq, memory_order_acquire) != want &&
			       !atomic_load_explicit(&p->abort, memory_order_relaxed)) {
				if (p->model == TM_MERGE)
					sched_yield();
				else
					tm_relax();
			}
			atomic_store_explicit(&p->parked, 0, memory_order_relaxed);
			break;
		}
		tm_net_wait_step(p);
	}
	p->in_sync_wait = 0;
	return p->ev_reply;
}

/* posts a synchronous event with a clone of pkt and waits for the answer */
static uintptr_t tm_net_sync_pkt(struct tm_pair *p, uint8_t kind, void *ws, void *handle, void *pkt)
{
	if (!tm_net_post_pkt(p, kind, ws, handle, pkt, NULL, 0, 0))
		return 0; /* refuse the SYN / ignore the connection: as an application out of memory would */
	return tm_net_sync(p);
}

/* ---- the stack's event callbacks ----------------------------------------------- */

/* unified, or the application thread holds the workspace: call the application */
#define TM_DIRECT(p) ((p)->model == TM_UNIFIED)

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		tm_inner_ops_arp_reply(context, pkt, p->app_opaque);
	else if (!p->shut)
		tm_net_post_pkt(p, TM_EV_ARP_REPLY, context, NULL, pkt, NULL, 0, 0);
}

static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		tm_inner_ops_icmp_reply(context, pkt, p->app_opaque);
	else if (!p->shut)
		tm_net_post_pkt(p, TM_EV_ICMP_REPLY, context, NULL, pkt, NULL, 0, 0);
}

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		return tm_inner_ops_tcp_accept(context, pkt, p->app_opaque);
	if (p->shut || p->direct)
		return 0;
	return (uint8_t) tm_net_sync_pkt(p, TM_EV_TCP_ACCEPT, context, NULL, pkt);
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		return tm_inner_ops_tcp_accepted(context, handle, pkt, p->app_opaque);
	if (p->shut || p->direct)
		return NULL;
	return (void *) tm_net_sync_pkt(p, TM_EV_TCP_ACCEPTED, context, handle, pkt);
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		return tm_inner_ops_tcp_connected(context, handle, pkt, p->app_opaque);
	if (p->shut || p->direct)
		return NULL;
	return (void *) tm_net_sync_pkt(p, TM_EV_TCP_CONNECTED, context, handle, pkt);
}

static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		tm_inner_ops_tcp_payload(context, handle, pkt, tcp_opaque, head_off, tail_off, p->app_opaque);
	else if (!p->shut)
		tm_net_post_pkt(p, TM_EV_TCP_PAYLOAD, context, handle, pkt, tcp_opaque, head_off, tail_off);
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		tm_inner_ops_tcp_acked(context, handle, pkt, tcp_opaque, p->app_opaque);
	else if (!p->shut)
		tm_net_post_pkt(p, TM_EV_TCP_ACKED, context, handle, pkt, tcp_opaque, 0, 0);
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	struct tm_msg *m;
	if (TM_DIRECT(p)) {
		tm_inner_ops_tcp_closed(handle, local_mac, local_ip4_be, local_port_be, peer_mac, peer_ip4_be,
					peer_port_be, tcp_opaque, p->app_opaque);
		return;
	}
	if (p->shut)
		return;
	tm_log_close(p, handle); /* from now on, queued operations on this handle are stale */
	if (!(m = tm_net_slot(p))) {
		/* only when the application thread itself closed a connection from a
		 * synchronous callback and the ring is full: tell it at once */
		if (p->direct)
			tm_inner_ops_tcp_closed(handle, local_mac, local_ip4_be, local_port_be, peer_mac,
						peer_ip4_be, peer_port_be, tcp_opaque, p->app_opaque);
		return;
	}
	m->kind = TM_EV_TCP_CLOSED;
	m->handle = handle;
	m->tcp_opaque = tcp_opaque;
	memcpy(m->local_mac, local_mac, sizeof(m->local_mac));
	memcpy(m->peer_mac, peer_mac, sizeof(m->peer_mac));
	m->local_ip4_be = local_ip4_be;
	m->peer_ip4_be = peer_ip4_be;
	m->u16[0] = local_port_be;
	m->u16[1] = peer_port_be;
	tm_net_post(p);
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (TM_DIRECT(p))
		tm_inner_ops_udp_payload(context, pkt, p->app_opaque);
	else if (!p->shut)
		tm_net_post_pkt(p, TM_EV_UDP_PAYLOAD, context, NULL, pkt, NULL, 0, 0);
}

/* ---- the application contract, as the backend calls it -------------------------- */

static void *__app_init(int argc, char *const *argv)
{
	struct tm_global *g = calloc(1, sizeof(*g));
	char **app_argv;
	int app_argc, i;
	const char *env = getenv("IIP_THREADMODEL");
	if (!g) {
		fprintf(stderr, "threadmodel: out of memory\n");
		exit(1);
	}
	tm_opts_default(&g->o);
	/* the application's options end at "--tm" (or "--"); ours follow */
	for (app_argc = 0; app_argc < argc && strcmp(argv[app_argc], "--tm") && strcmp(argv[app_argc], "--");
	     app_argc++)
		;
	if (app_argc < argc) {
		if (tm_parse(argc - app_argc - 1, argv + app_argc + 1, &g->o))
			exit(2);
	} else if (env && tm_parse_env(env, &g->o)) {
		fprintf(stderr, "threadmodel: (in IIP_THREADMODEL=\"%s\")\n", env);
		exit(2);
	}
	app_argv = calloc((size_t) app_argc + 1, sizeof(char *)); /* NULL-terminated, as main's */
	if (!app_argv) {
		fprintf(stderr, "threadmodel: out of memory\n");
		exit(1);
	}
	for (i = 0; i < app_argc; i++)
		app_argv[i] = argv[i];
	printf("threadmodel: %s", tm_model_name(g->o.model));
	if (g->o.model != TM_UNIFIED) {
		printf(", batch %u, queues %u slots, %u packets ready for the app thread", g->o.batch, g->o.slots,
		       g->o.supply);
		if (g->o.ncores) {
			printf(", app cores");
			for (i = 0; i < g->o.ncores; i++)
				printf("%s%u", i ? "," : " ", g->o.cores[i]);
		}
		if (g->o.model == TM_MERGE)
			printf(", wait %u us, SCHED_FIFO priority %d", g->o.wait_us, g->o.fifo_prio);
	}
	printf("\n");
	fflush(stdout);
	g->app_argv = app_argv; /* freed after the application's __app_exit: it may keep pointers into it */
	g->app_global = tm_inner_app_init(app_argc, app_argv);
	return g;
}

/* the networking thread's CPU if it is pinned to exactly one, else -1 */
static int tm_single_cpu_of_self(void)
{
	cpu_set_t set;
	int c, found = -1;
	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) || CPU_COUNT(&set) != 1)
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			found = c;
	return found;
}

static int tm_pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * Where the application thread may run (*set; returns 0 if anywhere).
 * split: the -c core, or else every core its networking thread may not
 * use (two spinning threads on one core would take turns by time slices).
 * merge: the -c core or the networking thread's own core, to which the
 * networking thread is pinned too.
 */
static int tm_choose_cpus(struct tm_pair *p, cpu_set_t *set)
{
	const struct tm_opts *o = &p->g->o;
	int cpu;
	CPU_ZERO(set);
	if (o->ncores && p->index >= o->ncores) {
		fprintf(stderr, "threadmodel: -c names %u core(s) but the backend started more networking threads\n",
			o->ncores);
		exit(2);
	}
	if (o->ncores) {
		cpu = o->cores[p->index];
	} else if (p->model == TM_SPLIT) {
		cpu_set_t net;
		long c, n = sysconf(_SC_NPROCESSORS_ONLN);
		if (pthread_getaffinity_np(pthread_self(), sizeof(net), &net))
			return 0;
		for (c = 0; c < n && c < CPU_SETSIZE; c++)
			if (!CPU_ISSET(c, &net))
				CPU_SET(c, set);
		if (!CPU_COUNT(set)) {
			fprintf(stderr, "threadmodel: warning: split, but the networking thread may run on every core: "
					"give the application threads theirs with -c\n");
			return 0;
		}
		return 1;
	} else {
		cpu = tm_single_cpu_of_self();
		if (cpu < 0)
			cpu = sched_getcpu();
	}
	if (cpu < 0)
		return 0;
	CPU_SET(cpu, set);
	if (p->model == TM_MERGE && tm_single_cpu_of_self() != cpu && tm_pin_self(cpu)) {
		fprintf(stderr, "threadmodel: cannot pin the networking thread to core %d\n", cpu);
		exit(2);
	}
	return 1;
}

static void *tm_alloc_or_die(size_t size)
{
	void *m = aligned_alloc(64, (size + 63) / 64 * 64);
	if (!m) {
		fprintf(stderr, "threadmodel: out of memory\n");
		exit(1);
	}
	memset(m, 0, size);
	return m;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct tm_global *g = (struct tm_global *) ((void **) opaque)[1];
	struct tm_pair *p = tm_alloc_or_die(sizeof(*p));
	uint32_t index = atomic_fetch_add(&g->npairs, 1);
	pthread_attr_t attr;
	cpu_set_t pin;
	int rc, pinned;
	if (index >= TM_MAX_CORES) {
		fprintf(stderr, "threadmodel: more than %d networking threads\n", TM_MAX_CORES);
		exit(1);
	}
	p->g = g;
	p->model = g->o.model;
	p->index = (uint16_t) index;
	p->core_id = core_id;
	p->workspace = workspace;
	p->net_opaque = (void **) opaque;
	p->app_opaque[0] = ((void **) opaque)[0];
	p->app_opaque[1] = g->app_global;
	p->app_opaque[3] = p;
	atomic_store(&g->pairs[index], p);
	if (p->model == TM_UNIFIED) {
		p->app_opaque[2] = tm_inner_app_thread_init(workspace, core_id, p->app_opaque);
		return p;
	}
	tm_ring_init(&p->ev, g->o.slots);
	tm_ring_init(&p->op, g->o.slots);
	tm_ring_init(&p->supply, g->o.slots);
	p->ev_slot = tm_alloc_or_die(sizeof(struct tm_msg) * g->o.slots);
	p->op_slot = tm_alloc_or_die(sizeof(struct tm_msg) * g->o.slots);
	p->supply_slot = tm_alloc_or_die(sizeof(void *) * g->o.slots);
	p->close_log = tm_alloc_or_die(sizeof(void *) * TM_CLOSE_LOG);
	tm_bell_init(&p->bell);
	pinned = tm_choose_cpus(p, &pin);
	p->clock_offset_ns = tm_clock_offset(opaque);
	{
		struct sched_param sp;
		int policy;
		if (!pthread_getschedparam(pthread_self(), &policy, &sp) && (policy == SCHED_FIFO || policy == SCHED_RR))
			p->net_rt_prio = sp.sched_priority;
	}
	tm_net_refill(p);
	pthread_attr_init(&attr);
	if (pinned)
		pthread_attr_setaffinity_np(&attr, sizeof(pin), &pin);
	rc = pthread_create(&p->th, &attr, tm_app_thread, p);
	pthread_attr_destroy(&attr);
	if (rc) {
		fprintf(stderr, "threadmodel: cannot start the application thread: %s\n", strerror(rc));
		exit(1);
	}
	p->started = 1;
	/* the application's __app_thread_init runs on its thread, holding the
	 * workspace: we only wait */
	while (!atomic_load_explicit(&p->app_inited, memory_order_acquire))
		sched_yield();
	return p;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (p->model == TM_UNIFIED) {
		tm_inner_app_loop(workspace, mac, ip4_be, next_us, p->app_opaque);
		return;
	}
	if (p->shut)
		return;
	if (!atomic_load_explicit(&p->ready, memory_order_relaxed)) {
		memcpy(p->mac, mac, sizeof(p->mac));
		p->ip4_be = ip4_be;
		atomic_store_explicit(&p->ready, 1, memory_order_release);
		if (p->model == TM_MERGE)
			tm_bell_ring(&p->bell);
	}
	/* the events of this iteration first (merge: the app runs now, on this
	 * core), then what it asked for, so its answers leave in this iteration */
	tm_net_publish(p);
	tm_net_service(p);
	if (p->model == TM_MERGE && tm_bell_wants_tick(&p->bell))
		tm_bell_ring(&p->bell);
	*next_us = 0; /* the application thread may post at any time: poll */
}

/* the application thread is done: execute (exec) or drop what it left, free every packet */
static void tm_net_shutdown(struct tm_pair *p, int exec)
{
	uint32_t k;
	if (p->started)
		pthread_join(p->th, NULL);
	p->started = 0;
	p->shut = 1; /* events from here on go nowhere */
	if (exec) {
		tm_net_service(p);
	} else {
		int64_t i;
		while ((i = tm_ring_peek(&p->op)) >= 0) {
			struct tm_msg m = p->op_slot[i];
			tm_ring_release(&p->op);
			if (m.pkt && m.kind != TM_OP_PKT_CLONE)
				iip_ops_pkt_free(m.pkt, p->net_opaque);
		}
	}
	for (k = 0; k < p->def_n; k++) {
		struct tm_msg *m = &p->def[(p->def_head + k) % p->def_cap];
		if (m->pkt && m->kind != TM_OP_PKT_CLONE)
			iip_ops_pkt_free(m->pkt, p->net_opaque);
	}
	p->def_n = 0;
	/* events never delivered (committed ones too) and unused fresh packets */
	for (k = p->ev.cons; k != p->ev.prod; k++) {
		struct tm_msg *m = &p->ev_slot[k & p->ev.mask];
		if (m->kind != TM_EV_TCP_CLOSED && m->pkt)
			iip_ops_pkt_free(m->pkt, p->net_opaque);
	}
	p->ev.cons = p->ev.prod;
	for (k = p->supply.cons; k != p->supply.prod; k++)
		iip_ops_pkt_free(p->supply_slot[k & p->supply.mask], p->net_opaque);
	p->supply.cons = p->supply.prod;
}

static uint8_t __app_should_stop(void *opaque)
{
	struct tm_pair *p = tm_net_pair(opaque);
	if (p->model == TM_UNIFIED)
		return tm_inner_app_should_stop(p->app_opaque);
	if (p->shut)
		return 1;
	if (!atomic_load_explicit(&p->app_done, memory_order_acquire))
		return 0;
	tm_net_shutdown(p, 1);
	return 1;
}

static void tm_print_counters(const struct tm_pair *p)
{
	printf("threadmodel: [%u] %s: events %llu (dropped %llu), operations %llu, deferred %llu, "
	       "dropped: stale %llu refused %llu unknown %llu; app thread: events %llu, sleeps %llu, "
	       "alloc waits %llu fails %llu; bell rings %llu wakeups %llu\n",
	       p->index, tm_model_name(p->model), (unsigned long long) p->ev_posted,
	       (unsigned long long) p->ev_dropped_clone, (unsigned long long) p->op_done,
	       (unsigned long long) p->def_sends, (unsigned long long) p->drop_stale,
	       (unsigned long long) p->drop_refused, (unsigned long long) p->drop_unknown,
	       (unsigned long long) p->app_events, (unsigned long long) p->app_sleeps,
	       (unsigned long long) p->app_alloc_waits, (unsigned long long) p->app_alloc_fail,
	       (unsigned long long) p->bell.rings, (unsigned long long) p->bell.wakeups);
}

static void __app_exit(void *app_global)
{
	struct tm_global *g = (struct tm_global *) app_global;
	uint32_t n = atomic_load(&g->npairs), i;
	for (i = 0; i < n; i++) {
		struct tm_pair *p = atomic_load(&g->pairs[i]);
		if (!p || p->model == TM_UNIFIED || p->shut)
			continue;
		/* the backend stopped before the application did (e.g. a hard stop) */
		atomic_store(&p->abort, 1);
		tm_bell_ring(&p->bell);
		tm_net_shutdown(p, 0);
	}
	tm_inner_app_exit(g->app_global);
	for (i = 0; i < n; i++) {
		struct tm_pair *p = atomic_load(&g->pairs[i]);
		if (!p)
			continue;
		if (g->o.verbose && p->model != TM_UNIFIED)
			tm_print_counters(p);
		free(p->ev_slot);
		free(p->op_slot);
		free(p->supply_slot);
		free(p->close_log);
		free(p->def);
		free(p);
	}
	fflush(stdout);
	free(g->app_argv);
	free(g);
}

#endif
