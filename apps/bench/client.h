/*
 * apps/bench/client.h — the client side: resolve the server's MAC (the
 * stack keeps no neighbour table), open -c connections (or UDP flows) per
 * thread on local ports the backend steers back to this thread, keep -d
 * requests in flight (ping-pong) or the pipe full (burst), time every
 * request, honour -r by spacing request starts, and after -t close
 * everything, optionally stop the server (-k), and stop.
 */
#ifndef APPS_BENCH_CLIENT_H
#define APPS_BENCH_CLIENT_H

enum bench_client_phase {
	BENCH_P_ARP,
	BENCH_P_CONNECT,
	BENCH_P_RUN,
	BENCH_P_CLOSE,     /* connections closing; new requests no longer start */
	BENCH_P_STOPCONN,  /* -k: the connection to the server's remote-stop port */
	BENCH_P_DONE,
};

static void bench_udp_pump(struct bench_conn *c, void *opaque);

static int bench_client_wants_write(struct bench_conn *c)
{
	const struct bench_opts *o = &c->t->g->o;
	if (c->t->phase != BENCH_P_RUN)
		return 0;
	return o->mode == BENCH_BURST || c->outstanding < o->depth;
}

/* -r: every request (burst: write) start takes a token; tokens come every
 * 1/rate s; a connection without one waits in FIFO order for __app_loop */
static int bench_take_token(struct bench_conn *c, void *opaque)
{
	struct bench_thread *t = c->t;
	uint64_t rate = t->g->o.rate, interval, now;
	if (!rate)
		return 1;
	interval = 1000000000ull / rate;
	now = bench_now(opaque);
	if (t->next_token_ns + interval < now)
		t->next_token_ns = now; /* idle: no catch-up burst */
	if (now >= t->next_token_ns) {
		t->next_token_ns += interval ? interval : 1;
		return 1;
	}
	bench_wait_push(c);
	return 0;
}

/* a ping-pong request's first byte was accepted by the stack: start its clock */
static void bench_client_started_request(struct bench_conn *c, void *opaque)
{
	uint32_t depth = c->t->g->o.depth;
	c->sent_ns[(c->sent_head + c->outstanding) % depth] = bench_now(opaque);
	c->outstanding++;
}

/* the reply to the oldest outstanding request is complete */
static void bench_client_complete(struct bench_conn *c, uint64_t now)
{
	struct bench_thread *t = c->t;
	uint64_t sent = c->sent_ns[c->sent_head];
	bl_hist_record(t->hist, now > sent ? now - sent : 0);
	c->sent_head = (c->sent_head + 1) % t->g->o.depth;
	c->outstanding--;
	t->requests++;
	if (c->reply_bad)
		t->bad_replies++;
	c->reply_bad = 0;
}

/* TCP reply bytes: every -R bytes complete the oldest request */
static void bench_client_tcp_rx(struct bench_conn *c, void *pkt, uint32_t head_off, uint32_t len, void *opaque)
{
	struct bench_thread *t = c->t;
	const struct bench_opts *o = &t->g->o;
	const struct bench_msg *r = &o->expect;
	struct bench_span_it it;
	const uint8_t *p;
	uint32_t n;
	uint64_t now = 0;
	if (o->mode != BENCH_PINGPONG)
		return;
	bench_span_init(&it, pkt, PB_TCP_PAYLOAD(pkt), head_off, len, opaque);
	while (bench_span_next(&it, &p, &n, opaque)) {
		while (n) {
			uint32_t take = r->len - c->rx_fill < n ? r->len - c->rx_fill : n;
			if (!c->outstanding) {
				t->unexpected_bytes += n; /* more than we asked for */
				break;
			}
			if (o->check) {
				if (!bench_matches(r, c->rx_fill, p, take))
					c->reply_bad = 1;
				t->checked_bytes += take;
			}
			c->rx_fill += take;
			p += take;
			n -= take;
			if (c->rx_fill == r->len) {
				if (!now)
					now = bench_now(opaque);
				c->rx_fill = 0;
				bench_client_complete(c, now);
			}
		}
	}
	if (now)
		bench_tcp_pump(c, opaque);
}

/* a local port whose return traffic the backend steers to this thread */
static int bench_pick_port(struct bench_thread *t, uint16_t proto, uint16_t peer_port_be, uint16_t *port_be,
			   void *opaque)
{
	struct bench_global *g = t->g;
	uint32_t tries;
	int round;
	for (round = 0; round < 2; round++) {
		for (tries = 0; tries < BENCH_PORT_COUNT; tries++) {
			uint32_t n = atomic_fetch_add_explicit(&g->port_cursor, 1, memory_order_relaxed);
			uint16_t port = (uint16_t) (BENCH_PORT_FIRST + n % BENCH_PORT_COUNT), a;
			if (t->port_conn[port])
				continue;
			if (!t->affinity_any) {
				a = helper_ip4_get_connection_affinity(proto, t->ip4_be, htons(port), g->o.server_ip4_be,
								       peer_port_be, opaque);
				if (a != UINT16_MAX && a != t->core_id)
					continue;
			}
			*port_be = htons(port);
			return 0;
		}
		/* e.g. a backend with one thread per host that always answers 0
		 * while our core id is the host's index: no steering to respect */
		if (g->o.verbose >= 2)
			printf("bench: [%u] the backend steers no port to core %u; using any port\n", t->index,
			       t->core_id);
		t->affinity_any = 1;
	}
	return -1;
}

static void bench_client_open(struct bench_thread *t, void *opaque)
{
	struct bench_global *g = t->g;
	const struct bench_opts *o = &g->o;
	uint32_t i;
	for (i = 0; i < o->conns; i++) {
		struct bench_conn *c = &t->conns[i];
		uint16_t port_be;
		if (bench_pick_port(t, (uint16_t) o->proto, o->port_be, &port_be, opaque)) {
			fprintf(stderr, "bench: [%u] no free local port for connection %u\n", t->index, i);
			c->state = BENCH_C_FAILED;
			t->failed++;
			continue;
		}
		c->local_port_be = port_be;
		t->port_conn[ntohs(port_be)] = i + 1;
		if (o->proto == 17) {
			c->state = BENCH_C_OPEN;
			t->connected++;
			continue;
		}
		c->state = BENCH_C_CONNECTING;
		if (iip_tcp_connect(t->workspace, t->mac, t->ip4_be, port_be, g->server_mac, o->server_ip4_be, o->port_be,
				    opaque)) {
			c->state = BENCH_C_FAILED;
			t->failed++;
		}
	}
	if (o->proto == 17 && o->mode == BENCH_PINGPONG)
		for (i = 0; i < o->conns; i++)
			bench_udp_pump(&t->conns[i], opaque);
}

static void bench_conn_close(struct bench_conn *c, void *opaque)
{
	if (c->state != BENCH_C_OPEN)
		return;
	c->state = BENCH_C_CLOSING;
	iip_tcp_close(c->t->workspace, c->handle, opaque);
}

/* the run is over for this thread: no new requests, close every connection */
static void bench_client_end_run(struct bench_thread *t, uint64_t now, void *opaque)
{
	struct bench_global *g = t->g;
	uint64_t zero = 0;
	uint32_t i;
	atomic_compare_exchange_strong(&g->end_ns, &zero, now);
	t->phase = BENCH_P_CLOSE;
	t->phase_ns = now;
	for (i = 0; i < g->o.conns; i++) {
		struct bench_conn *c = &t->conns[i];
		if (g->o.proto == 17) {
			if (c->state == BENCH_C_OPEN) {
				c->state = BENCH_C_CLOSED;
				t->closed++;
			}
			continue;
		}
		bench_conn_close(c, opaque); /* connecting ones are closed when they connect */
	}
	while (bench_wait_pop(t))
		;
}

static void bench_client_remote_stop(struct bench_thread *t, void *opaque)
{
	struct bench_global *g = t->g;
	struct bench_conn *s = &t->stop_conn;
	uint16_t port_be;
	s->t = t;
	s->is_stop = 1;
	s->state = BENCH_C_FAILED;
	if (bench_pick_port(t, 6, g->o.stop_port_be, &port_be, opaque))
		return;
	s->local_port_be = port_be;
	s->state = BENCH_C_CONNECTING;
	if (iip_tcp_connect(t->workspace, t->mac, t->ip4_be, port_be, g->server_mac, g->o.server_ip4_be,
			    g->o.stop_port_be, opaque))
		s->state = BENCH_C_FAILED;
}

/* UDP: one datagram per request */
static void bench_udp_pump(struct bench_conn *c, void *opaque)
{
	struct bench_thread *t = c->t;
	struct bench_global *g = t->g;
	const struct bench_opts *o = &g->o;
	while (c->state == BENCH_C_OPEN && t->phase == BENCH_P_RUN) {
		void *pkt;
		if (o->mode == BENCH_PINGPONG ? c->outstanding >= o->depth : !c->credits)
			return;
		if (!bench_take_token(c, opaque))
			return;
		pkt = iip_ops_pkt_alloc(opaque);
		if (!pkt) {
			bench_todo_push(c);
			return;
		}
		memcpy(iip_ops_pkt_get_data(pkt, opaque), o->msg.bytes, o->msg.len);
		iip_ops_pkt_set_len(pkt, (uint16_t) o->msg.len, opaque);
		if (iip_udp_send(t->workspace, t->mac, t->ip4_be, c->local_port_be, g->server_mac, o->server_ip4_be,
				 o->port_be, pkt, opaque)) {
			iip_ops_pkt_free(pkt, opaque);
			t->tx_refused++;
			bench_todo_push(c);
			return;
		}
		bl_count(&t->ctr->tx_bytes, o->msg.len);
		bl_count(&t->ctr->tx_ops, 1);
		if (o->mode == BENCH_PINGPONG)
			bench_client_started_request(c, opaque);
		else
			c->credits--;
	}
}

static void bench_client_udp_rx(struct bench_thread *t, void *pkt, void *opaque)
{
	const struct bench_opts *o = &t->g->o;
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	struct iip_udp_hdr *udp = PB_UDP(pkt);
	uint32_t len = PB_UDP_PAYLOAD_LEN(pkt), idx = t->port_conn[ntohs(udp->dst_be)];
	struct bench_conn *c;
	if (ip->src_be != o->server_ip4_be || udp->src_be != o->port_be || !idx)
		return;
	c = &t->conns[idx - 1];
	bl_count(&t->ctr->rx_bytes, len);
	bl_count(&t->ctr->rx_ops, 1);
	if (o->mode != BENCH_PINGPONG)
		return;
	if (!c->outstanding) {
		t->unexpected_bytes += len; /* a late reply to a request counted lost */
		return;
	}
	if (o->check) {
		struct bench_span_it it;
		const uint8_t *p;
		uint32_t n, off = 0;
		if (len != o->expect.len)
			c->reply_bad = 1;
		bench_span_init(&it, pkt, PB_UDP_PAYLOAD(pkt), 0, len, opaque);
		while (bench_span_next(&it, &p, &n, opaque)) {
			if (off + n > o->expect.len || !bench_matches(&o->expect, off, p, n))
				c->reply_bad = 1;
			off += n;
		}
		t->checked_bytes += len;
	}
	bench_client_complete(c, bench_now(opaque));
	bench_udp_pump(c, opaque);
}

/* UDP ping-pong: a request unanswered for 1 s is lost; its slot is reused */
static void bench_client_udp_reclaim(struct bench_thread *t, uint64_t now, void *opaque)
{
	uint32_t i;
	for (i = 0; i < t->g->o.conns; i++) {
		struct bench_conn *c = &t->conns[i];
		if (c->state != BENCH_C_OPEN || !c->outstanding || now - c->sent_ns[c->sent_head] < BENCH_UDP_LOSS_NS)
			continue;
		t->lost += c->outstanding;
		c->outstanding = 0;
		c->sent_head = 0;
		bench_udp_pump(c, opaque);
	}
}

/* work queued by callbacks: sends that lacked buffers, closes */
static void bench_client_todo(struct bench_thread *t, void *opaque)
{
	struct bench_conn *list = t->todo;
	t->todo = NULL;
	while (list) {
		struct bench_conn *c = list;
		list = c->todo_next;
		c->on_todo = 0;
		if (c->state != BENCH_C_OPEN)
			continue;
		if (c->is_stop || c->peer_fin || t->phase >= BENCH_P_CLOSE)
			bench_conn_close(c, opaque);
		else if (t->g->o.proto == 17)
			bench_udp_pump(c, opaque);
		else
			bench_tcp_pump(c, opaque);
	}
}

static void bench_client_loop(struct bench_thread *t, uint64_t now, uint32_t *next_us, void *opaque)
{
	struct bench_global *g = t->g;
	const struct bench_opts *o = &g->o;
	uint64_t end;
	bench_client_todo(t, opaque);
	switch (t->phase) {
	case BENCH_P_ARP:
		if (!atomic_load_explicit(&g->server_mac_known, memory_order_acquire)) {
			if (!t->arp_last_ns || now - t->arp_last_ns >= BENCH_ARP_RETRY_NS) {
				if (t->arp_tries++ == BENCH_ARP_TRIES) {
					fprintf(stderr, "bench: [%u] no ARP reply from the server after %d requests\n",
						t->index, BENCH_ARP_TRIES);
					atomic_store(&g->fatal, 1);
					t->phase = BENCH_P_DONE;
					return;
				}
				iip_arp_request(t->workspace, t->mac, t->ip4_be, o->server_ip4_be, opaque);
				t->arp_last_ns = now;
			}
			bench_wake_at(next_us, now, t->arp_last_ns + BENCH_ARP_RETRY_NS);
			return;
		}
		t->phase = BENCH_P_CONNECT;
		/* fall through */
	case BENCH_P_CONNECT:
		t->phase = BENCH_P_RUN;
		t->phase_ns = now;
		t->next_token_ns = now;
		bench_client_open(t, opaque);
		/* fall through */
	case BENCH_P_RUN:
		end = o->duration_s ? atomic_load(&g->start_ns) + o->duration_s * 1000000000ull : UINT64_MAX;
		if (now >= end || bench_signalled || atomic_load(&g->fatal) || atomic_load(&g->end_ns) ||
		    (t->failed + t->closed >= o->conns)) {
			if (t->failed >= o->conns && o->conns)
				fprintf(stderr, "bench: [%u] every connection failed\n", t->index);
			bench_client_end_run(t, now, opaque);
			return;
		}
		if (o->rate) {
			struct bench_conn *c;
			while (t->wait_head && now >= t->next_token_ns && (c = bench_wait_pop(t)))
				o->proto == 17 ? bench_udp_pump(c, opaque) : bench_tcp_pump(c, opaque);
			if (t->wait_head)
				bench_wake_at(next_us, now, t->next_token_ns);
		}
		if (o->proto == 17 && o->mode == BENCH_BURST) {
			uint32_t i;
			for (i = 0; i < o->conns; i++) {
				t->conns[i].credits = o->depth; /* depth datagrams per flow per round */
				bench_udp_pump(&t->conns[i], opaque);
			}
			*next_us = 0;
		}
		if (o->proto == 17 && o->mode == BENCH_PINGPONG) {
			if (now >= t->next_loss_check_ns) {
				bench_client_udp_reclaim(t, now, opaque);
				t->next_loss_check_ns = now + BENCH_UDP_LOSS_NS / 10;
			}
			bench_wake_at(next_us, now, t->next_loss_check_ns);
		}
		if (t->todo)
			*next_us = 0;
		bench_wake_at(next_us, now, end);
		return;
	case BENCH_P_CLOSE:
		if (t->failed + t->closed < o->conns && now - t->phase_ns < BENCH_GRACE_NS) {
			bench_wake_at(next_us, now, t->phase_ns + BENCH_GRACE_NS);
			return;
		}
		t->phase = BENCH_P_STOPCONN;
		t->phase_ns = now;
		if (o->remote_stop && t->index == 0 && !atomic_load(&g->fatal))
			bench_client_remote_stop(t, opaque);
		else
			t->stop_conn.state = BENCH_C_FAILED;
		/* fall through */
	case BENCH_P_STOPCONN:
		if ((t->stop_conn.state == BENCH_C_CLOSED || t->stop_conn.state == BENCH_C_FAILED) ||
		    now - t->phase_ns >= BENCH_GRACE_NS) {
			if (t->stop_conn.state == BENCH_C_CLOSED && o->verbose >= 1)
				printf("bench: remote stop sent to port %u\n", ntohs(o->stop_port_be));
			t->phase = BENCH_P_DONE;
			return;
		}
		bench_wake_at(next_us, now, t->phase_ns + BENCH_GRACE_NS);
		return;
	default:
		return;
	}
}

#endif
