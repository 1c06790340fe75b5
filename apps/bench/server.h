/*
 * apps/bench/server.h — the server side: accept on -p (and on the
 * remote-stop port), answer each request with the message (ping-pong) or
 * discard what arrives (burst), over TCP or UDP; stop on a connection to the
 * remote-stop port, after -t, or on a signal, closing what is still open.
 */
#ifndef APPS_BENCH_SERVER_H
#define APPS_BENCH_SERVER_H

static struct bench_conn *bench_server_conn_new(struct bench_thread *t)
{
	struct bench_conn *c = t->free_conns;
	if (c)
		t->free_conns = c->next;
	else
		c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->next = t->live;
	if (t->live)
		t->live->prev = c;
	t->live = c;
	t->nlive++;
	return c;
}

/* after iip_ops_tcp_closed, from __app_loop (never while on a list) */
static void bench_server_conn_free(struct bench_conn *c)
{
	struct bench_thread *t = c->t;
	if (c->prev)
		c->prev->next = c->next;
	else
		t->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	t->nlive--;
	c->next = t->free_conns;
	t->free_conns = c;
}

static void bench_server_stop_requested(struct bench_global *g, const char *why)
{
	int expected = 0;
	if (atomic_compare_exchange_strong(&g->stop_requested, &expected, 1)) {
		printf("bench: %s\n", why); /* once, whatever the verbosity: it says why we end */
		fflush(stdout);
	}
}

/* request bytes of an accepted connection */
static void bench_server_tcp_rx(struct bench_conn *c, void *pkt, uint32_t head_off, uint32_t len, void *opaque)
{
	struct bench_thread *t = c->t;
	const struct bench_opts *o = &t->g->o;
	if (o->check) {
		struct bench_span_it it;
		const uint8_t *p;
		uint32_t n;
		bench_span_init(&it, pkt, PB_TCP_PAYLOAD(pkt), head_off, len, opaque);
		while (bench_span_next(&it, &p, &n, opaque)) {
			if (!bench_matches(&o->expect, c->rx_stream, p, n))
				t->bad_bytes += n;
			c->rx_stream += n;
			t->checked_bytes += n;
		}
	}
	if (o->mode != BENCH_PINGPONG)
		return;
	if (o->request_len) {
		c->rx_acc += len;
		c->credits += c->rx_acc / o->request_len;
		t->answered += c->rx_acc / o->request_len;
		c->rx_acc %= o->request_len;
	} else {
		c->credits++; /* bench-iip: one reply per packet received */
		t->answered++;
	}
	bench_tcp_pump(c, opaque);
}

static void bench_server_udp_rx(struct bench_thread *t, void *pkt, void *opaque)
{
	const struct bench_opts *o = &t->g->o;
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	struct iip_udp_hdr *udp = PB_UDP(pkt);
	uint32_t len = PB_UDP_PAYLOAD_LEN(pkt);
	uint8_t peer_mac[6];
	void *out;
	if (o->proto != 17 || udp->dst_be != o->port_be)
		return;
	bl_count(&t->ctr->rx_bytes, len);
	bl_count(&t->ctr->rx_ops, 1);
	if (o->check) {
		struct bench_span_it it;
		const uint8_t *p;
		uint32_t n, off = 0;
		bench_span_init(&it, pkt, PB_UDP_PAYLOAD(pkt), 0, len, opaque);
		while (bench_span_next(&it, &p, &n, opaque)) {
			if (off + n > o->expect.len || !bench_matches(&o->expect, off, p, n))
				t->bad_bytes += n;
			off += n;
		}
		if (len != o->expect.len)
			t->bad_bytes += 1;
		t->checked_bytes += len;
	}
	if (o->mode != BENCH_PINGPONG)
		return;
	out = iip_ops_pkt_alloc(opaque);
	if (!out) {
		t->tx_refused++;
		return; /* the client counts it lost */
	}
	memcpy(iip_ops_pkt_get_data(out, opaque), o->msg.bytes, o->msg.len);
	iip_ops_pkt_set_len(out, (uint16_t) o->msg.len, opaque);
	memcpy(peer_mac, iip_ops_l2_hdr_src_ptr(pkt, opaque), 6);
	if (iip_udp_send(t->workspace, t->mac, ip->dst_be, udp->dst_be, peer_mac, ip->src_be, udp->src_be, out, opaque)) {
		iip_ops_pkt_free(out, opaque);
		t->tx_refused++;
		return;
	}
	t->answered++;
	bl_count(&t->ctr->tx_bytes, o->msg.len);
	bl_count(&t->ctr->tx_ops, 1);
}

static void bench_server_todo(struct bench_thread *t, void *opaque)
{
	struct bench_conn *list = t->todo;
	t->todo = NULL;
	while (list) {
		struct bench_conn *c = list;
		list = c->todo_next;
		c->on_todo = 0;
		if (c->state == BENCH_C_CLOSED)
			bench_server_conn_free(c);
		else if (c->state == BENCH_C_OPEN && (c->peer_fin || c->is_stop || t->stop_seen))
			bench_conn_close(c, opaque);
		else if (c->state == BENCH_C_OPEN)
			bench_tcp_pump(c, opaque);
	}
}

static void bench_server_loop(struct bench_thread *t, uint64_t now, uint32_t *next_us, void *opaque)
{
	struct bench_global *g = t->g;
	const struct bench_opts *o = &g->o;
	if (o->duration_s) {
		uint64_t end = atomic_load(&g->start_ns) + o->duration_s * 1000000000ull;
		if (now >= end)
			bench_server_stop_requested(g, "duration reached");
		else
			bench_wake_at(next_us, now, end);
	}
	if (bench_signalled)
		bench_server_stop_requested(g, "stop signal");
	if (!t->stop_seen && atomic_load(&g->stop_requested)) {
		struct bench_conn *c;
		t->stop_seen = 1;
		t->phase_ns = now;
		for (c = t->live; c; c = c->next)
			bench_todo_push(c); /* closed from the todo list */
	}
	bench_server_todo(t, opaque);
	if (t->todo)
		*next_us = 0;
	if (t->stop_seen)
		bench_wake_at(next_us, now, t->phase_ns + BENCH_GRACE_NS);
	else /* another thread may get the remote stop: notice it within 100 ms */
		bench_wake_at(next_us, now, now + 100000000ull);
}

#endif
