/*
 * tcp_listen.c: segments that match no connection (RFC 9293 3.10.7.1 and
 * 3.10.7.2): a SYN goes to the application (iip_ops_tcp_accept), which
 * decides whether the port listens; anything else is answered with a RST.
 *
 * When the connection pool is exhausted or the half-open backlog is full,
 * the SYN-ACK carries a SYN cookie instead of creating state (RFC 4987 3.6):
 * the ISN encodes a time counter, the MSS class and a keyed hash of the
 * 4-tuple, and the final ACK recreates the connection.  Cookie connections
 * run without window scaling, SACK and timestamps, which the cookie cannot
 * remember.
 */

static const uint16_t __iip_tcp_cookie_mss[8] = { 536, 1024, 1220, 1300, 1360, 1400, 1440, 1460 };

static uint32_t __iip_tcp_cookie_hash(struct iip_workspace *ws, struct iip_ip4_rx *rx, struct iip_tcp_seg *s, uint32_t count, uint32_t irs)
{
	uint32_t m[5];
	m[0] = rx->ip->dst_be;
	m[1] = rx->ip->src_be;
	m[2] = ((uint32_t) s->th->dst_be << 16) | s->th->src_be;
	m[3] = count;
	m[4] = irs;
	return __iip_halfsiphash(&ws->secret[2], m, 5);
}

/* ISN = count (5 bits) | hash (24 bits) | MSS class (3 bits); count ticks every 64 s. */
static uint32_t __iip_tcp_cookie_make(struct iip_workspace *ws, struct iip_ip4_rx *rx, struct iip_tcp_seg *s, uint16_t mss)
{
	uint32_t count = (ws->now_ms >> 16) & 0x1f, idx = 0, i;
	for (i = 0; i < 8; i++)
		if (__iip_tcp_cookie_mss[i] <= mss)
			idx = i;
	return (count << 27) | ((__iip_tcp_cookie_hash(ws, rx, s, count, s->seq) & 0xffffff) << 3) | idx;
}

/* Checks the cookie an ACK returns; the MSS it encoded, or 0 if invalid. */
static uint16_t __iip_tcp_cookie_check(struct iip_workspace *ws, struct iip_ip4_rx *rx, struct iip_tcp_seg *s)
{
	uint32_t cookie = s->ack - 1, now = (ws->now_ms >> 16) & 0x1f, count = cookie >> 27;
	if (count != now && count != ((now - 1) & 0x1f))
		return 0; /* older than one to two minutes */
	if (((cookie >> 3) & 0xffffff) != (__iip_tcp_cookie_hash(ws, rx, s, count, s->seq - 1) & 0xffffff))
		return 0;
	return __iip_tcp_cookie_mss[cookie & 7];
}

/* Fills the parts of a new connection common to every way of creating it. */
static void __iip_tcp_conn_setup(struct iip_workspace *ws, struct iip_tcp_conn *c, uint8_t mac[], void *pkt, void *opaque)
{
	uint16_t alen = iip_ops_l2_addr_len(opaque);
	__iip_memcpy(c->local_mac, mac, alen);
	if (pkt)
		__iip_memcpy(c->peer_mac, iip_ops_l2_hdr_src_ptr(pkt, opaque), alen);
	c->rcv_mss = (uint16_t) (c->pmtu - 40);
	c->rcv_wscale = IIP_CONF_TCP_WSCALE;
	(void) ws;
}

static void __iip_tcp_listen_input(struct iip_workspace *ws, uint8_t mac[], struct iip_ip4_rx *rx, struct iip_tcp_seg *s, void *opaque)
{
	void *pkt = rx->pkt;
	struct iip_tcp_conn *c;
	if (s->flags & IIP_TCP_FLAG_RST)
		goto drop; /* never answer a RST */
	if ((s->flags & (IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK)) == IIP_TCP_FLAG_ACK) {
		uint16_t mss = __iip_tcp_cookie_check(ws, rx, s);
		if (mss && (c = __iip_tcp_conn_new(ws, rx->ip->dst_be, s->th->dst_be, rx->ip->src_be, s->th->src_be, opaque)) != NULL) {
			IIP_STATS_INC(ws, rx_tcp_syn_cookie_ok);
			__iip_tcp_conn_setup(ws, c, mac, pkt, opaque);
			c->syn_cookie = 1;
			c->rcv_wscale = 0;
			c->iss = s->ack - 1;
			c->snd_una = c->recover = c->iss;
			c->snd_nxt = c->snd_max = c->snd_queued = s->ack;
			c->irs = s->seq - 1;
			c->rcv_nxt = s->seq;
			/* the window our cookie SYN-ACK offered (unscaled) */
			c->rcv_adv = c->rcv_nxt + __iip_min(__iip_tcp_rcv_space(c), 65535U);
			c->peer_mss = mss;
			__iip_tcp_set_snd_mss(c);
			__iip_tcp_cc_init(c);
			c->state = IIP_TCP_STATE_SYN_RECEIVED;
			ws->syn_received_cnt++;
			__iip_tcp_sync_input(ws, c, pkt, s, opaque);
			return;
		}
		if (mss)
			IIP_STATS_INC(ws, rx_tcp_conn_exhausted);
		else if (s->ack)
			IIP_STATS_INC(ws, rx_tcp_syn_cookie_bad);
	}
	if ((s->flags & (IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN)) != IIP_TCP_FLAG_SYN) {
		IIP_STATS_INC(ws, rx_tcp_no_conn);
		__iip_tcp_send_rst_reply(ws, mac, rx, s->th, s->seg_len, opaque);
		goto drop;
	}
	if (!iip_ops_tcp_accept(ws, pkt, opaque)) {
		/* nobody listens on that port: connection refused */
		IIP_STATS_INC(ws, rx_tcp_refused);
		__iip_tcp_send_rst_reply(ws, mac, rx, s->th, s->seg_len, opaque);
		goto drop;
	}
	c = NULL;
	if (ws->syn_received_cnt < IIP_CONF_TCP_SYN_BACKLOG)
		c = __iip_tcp_conn_new(ws, rx->ip->dst_be, s->th->dst_be, rx->ip->src_be, s->th->src_be, opaque);
	if (!c) {
		/* no state to spare: answer with a cookie */
		struct iip_tcp_conn tmp;
		__iip_memset(&tmp, 0, sizeof(tmp));
		tmp.local_ip4_be = rx->ip->dst_be;
		tmp.peer_ip4_be = rx->ip->src_be;
		tmp.local_port_be = s->th->dst_be;
		tmp.peer_port_be = s->th->src_be;
		tmp.pmtu = __iip_mtu(ws);
		__iip_tcp_conn_setup(ws, &tmp, mac, pkt, opaque);
		tmp.rcv_wscale = 0;
		tmp.rcv_nxt = s->seq + 1;
		tmp.rcv_adv = tmp.rcv_nxt;
		tmp.iss = __iip_tcp_cookie_make(ws, rx, s, s->opts.has_mss ? s->opts.mss : 536);
		__iip_tcp_xmit(ws, &tmp, tmp.iss, 0, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK, opaque);
		IIP_STATS_INC(ws, rx_tcp_syn_cookie_sent);
		goto drop;
	}
	__iip_tcp_conn_setup(ws, c, mac, pkt, opaque);
	__iip_tcp_syn_in(ws, c, s);
	c->iss = __iip_tcp_isn(ws, c->local_ip4_be, c->local_port_be, c->peer_ip4_be, c->peer_port_be);
	c->snd_una = c->recover = c->iss;
	c->snd_nxt = c->snd_max = c->snd_queued = c->iss + 1;
	c->snd_wnd = s->win;
	c->state = IIP_TCP_STATE_SYN_RECEIVED;
	ws->syn_received_cnt++;
	c->rtt_timing = 1;
	c->rtt_seq = c->iss;
	c->rtt_start_ms = ws->now_ms;
	__iip_tcp_xmit(ws, c, c->iss, 0, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK, opaque);
	__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
drop:
	iip_ops_pkt_free(pkt, opaque);
}
