/*
 * tcp_api.c: the TCP calls of the API (seed 001) and the per-connection
 * extensions.  Return values: 0 means done/accepted; any other value is an
 * IIP_ERR_* code and nothing changed (the caller keeps its packet).
 */

#define IIP_ERR_STATE (1)	/* the connection is not in a state that allows it */
#define IIP_ERR_NOMEM (2)	/* no connection object, packet wrapper or packet */
#define IIP_ERR_QUEUE_FULL (3)	/* IIP_CONF_TCP_TX_QUEUE_PKTS packets already queued */
#define IIP_ERR_EXISTS (4)	/* the 4-tuple is in use */
#define IIP_ERR_INVALID (5)	/* bad argument (empty or chained packet, zero port) */

/*
 * Active open (RFC 9293 3.10.1).  The MACs are the integrator's (it keeps
 * the ARP table).  The application learns the handle in
 * iip_ops_tcp_connected; if the peer refuses or never answers, it gets
 * iip_ops_tcp_closed with a NULL tcp_opaque instead.
 */
static __iip_unused_fn uint16_t iip_tcp_connect(void *context, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
				uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c;
	uint16_t alen = iip_ops_l2_addr_len(opaque);
	__iip_ws_prepare(ws, opaque);
	if (!local_port_be || !peer_port_be)
		return IIP_ERR_INVALID;
	if (__iip_tcp_lookup(ws, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be))
		return IIP_ERR_EXISTS;
	c = __iip_tcp_conn_new(ws, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be, opaque);
	if (!c)
		return IIP_ERR_NOMEM;
	__iip_memcpy(c->local_mac, local_mac, alen);
	__iip_memcpy(c->peer_mac, peer_mac, alen);
	c->rcv_mss = (uint16_t) (c->pmtu - 40);
	c->rcv_wscale = IIP_CONF_TCP_WSCALE;
	c->snd_mss = (uint16_t) (c->pmtu - 40); /* until the SYN-ACK tells */
	c->active_open = 1;
	c->app_notified = 1; /* a failure is reported through iip_ops_tcp_closed */
	c->iss = __iip_tcp_isn(ws, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be);
	c->snd_una = c->recover = c->iss;
	c->snd_nxt = c->snd_max = c->snd_queued = c->iss + 1;
	c->state = IIP_TCP_STATE_SYN_SENT;
	c->rtt_timing = 1;
	c->rtt_seq = c->iss;
	c->rtt_start_ms = ws->now_ms;
	__iip_tcp_xmit(ws, c, c->iss, 0, IIP_TCP_FLAG_SYN, opaque);
	__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
	__iip_flush_outside_run(ws, opaque);
	return 0;
}

/*
 * Closes our direction (RFC 9293 3.10.4): a FIN follows the data already
 * queued.  Data the peer still sends is delivered until it closes too; the
 * handle stays valid until iip_ops_tcp_closed.
 */
static __iip_unused_fn uint16_t iip_tcp_close(void *context, void *handle, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	if (!c || c->closed_by_app)
		return IIP_ERR_STATE;
	switch (c->state) {
	case IIP_TCP_STATE_SYN_SENT:
	case IIP_TCP_STATE_SYN_RECEIVED:
		c->closed_by_app = 1;
		__iip_tcp_conn_release(ws, c, opaque);
		return 0;
	case IIP_TCP_STATE_ESTABLISHED:
		c->state = IIP_TCP_STATE_FIN_WAIT_1;
		break;
	case IIP_TCP_STATE_CLOSE_WAIT:
		c->state = IIP_TCP_STATE_LAST_ACK;
		break;
	default:
		return IIP_ERR_STATE;
	}
	c->closed_by_app = 1;
	c->fin_queued = 1;
	c->fin_seq = c->snd_queued;
	__iip_tcp_schedule_output(ws, c, opaque);
	return 0;
}

/*
 * Queues pkt's data (one segment, no headers) for sending; it goes out as
 * windows allow, by reference (zero copy) when the NIC does scatter-gather.
 * Returns 0 when accepted: the stack owns pkt, reports it through
 * iip_ops_tcp_acked once every byte is acknowledged, then frees it.  On any
 * other value the caller still owns pkt: IIP_ERR_STATE (not established or
 * already closed by us), IIP_ERR_QUEUE_FULL, IIP_ERR_NOMEM (no wrapper),
 * IIP_ERR_INVALID (empty or chained packet).  tcp_flags: PSH and URG are
 * added to the segments carrying this data (urgent data is delivered
 * inline; RFC 6093 discourages its use).
 */
static __iip_unused_fn uint16_t iip_tcp_send(void *context, void *handle, void *pkt, uint16_t tcp_flags, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	struct iip_pb *pb;
	uint16_t len = iip_ops_pkt_get_len(pkt, opaque);
	if (!c || c->closed_by_app || (c->state != IIP_TCP_STATE_ESTABLISHED && c->state != IIP_TCP_STATE_CLOSE_WAIT)) {
		IIP_STATS_INC(ws, tx_tcp_refused);
		return IIP_ERR_STATE;
	}
	if (!len || iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque)) {
		IIP_STATS_INC(ws, tx_tcp_refused);
		return IIP_ERR_INVALID;
	}
	if (c->txq.cnt >= IIP_CONF_TCP_TX_QUEUE_PKTS) {
		IIP_STATS_INC(ws, tx_tcp_refused);
		return IIP_ERR_QUEUE_FULL;
	}
	pb = __iip_pb_get(ws, pkt);
	if (!pb) {
		IIP_STATS_INC(ws, tx_tcp_refused);
		return IIP_ERR_NOMEM;
	}
	pb->seq = c->snd_queued;
	pb->len = len;
	pb->tcp_flags = (uint8_t) (tcp_flags & (IIP_TCP_FLAG_PSH | IIP_TCP_FLAG_URG));
	__iip_q_append(&c->txq, pb);
	c->snd_queued += len;
	/*
	 * Auto-corking: called from the application's loop (outside iip_run),
	 * with data in flight and less queued than one TSO frame, wait for the
	 * end of the next iip_run batch (the ACK of the data in flight
	 * guarantees one) so that consecutive sends leave as one large frame
	 * instead of one segment each.  Nagle off (iip_tcp_set_nodelay) means
	 * send at once.
	 */
	if (!ws->in_run && !c->nodelay && c->snd_nxt != c->snd_una
			&& c->snd_queued - c->snd_nxt < __iip_tcp_max_burst(ws, c, opaque)) {
		if (!c->in_out_list) {
			c->in_out_list = 1;
			c->out_next = ws->out_list;
			ws->out_list = c;
		}
		return 0;
	}
	__iip_tcp_schedule_output(ws, c, opaque);
	return 0;
}

/*
 * The application consumed cnt of the packets iip_ops_tcp_payload gave it.
 * The advertised window is (IIP_CONF_TCP_RX_BUF_PKTS - packets delivered
 * but not consumed - packets held out of order) x MSS, so a reader that
 * does not consume throttles the peer.  When the window grows by at least
 * an MSS (or half the buffer) beyond what was announced, a window update
 * goes out (RFC 9293 3.8.6.2.2).
 */
static __iip_unused_fn void iip_tcp_rxbuf_consumed(void *context, void *handle, uint16_t cnt, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	uint32_t before_right, after_right;
	c->rx_unconsumed = cnt > c->rx_unconsumed ? 0 : c->rx_unconsumed - cnt;
	if (c->state < IIP_TCP_STATE_ESTABLISHED || c->state == IIP_TCP_STATE_TIME_WAIT || c->fin_rcvd)
		return;
	before_right = c->rcv_adv;
	after_right = c->rcv_nxt + __iip_tcp_rcv_space(c);
	if (__iip_seq_gt(after_right, before_right)
			&& after_right - before_right >= __iip_min((uint32_t) IIP_CONF_TCP_RX_BUF_PKTS * c->rcv_mss / 2, (uint32_t) c->rcv_mss)
			&& before_right - c->rcv_nxt < c->rcv_mss) {
		/* the window was nearly closed: tell the peer it opened */
		c->ack_now = 1;
		__iip_tcp_schedule_output(ws, c, opaque);
	}
}

/* Extension: Nagle's algorithm off (on != 0) or on, per connection (like TCP_NODELAY). */
static __iip_unused_fn void iip_tcp_set_nodelay(void *context, void *handle, uint8_t on)
{
	(void) context;
	((struct iip_tcp_conn *) handle)->nodelay = on ? 1 : 0;
}

/* Extension: keepalive (RFC 1122 4.2.3.6); zero values keep the defaults. */
static __iip_unused_fn void iip_tcp_set_keepalive(void *context, void *handle, uint8_t on, uint32_t idle_ms, uint32_t intvl_ms, uint8_t probes)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	c->keepalive_on = on ? 1 : 0;
	if (idle_ms)
		c->keepalive_idle_ms = idle_ms;
	if (intvl_ms)
		c->keepalive_intvl_ms = intvl_ms;
	if (probes)
		c->keepalive_probes = probes;
	c->keepalive_probes_sent = 0;
	if (c->keepalive_on)
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_KEEPALIVE, &c->t_keepalive, c->keepalive_idle_ms);
	else
		__iip_tcp_timer_off(c, IIP_TCP_TIMER_KEEPALIVE);
}

/* Extension: congestion controller of a connection (IIP_TCP_CC_NEWRENO, IIP_TCP_CC_CUBIC). */
static __iip_unused_fn void iip_tcp_set_cc(void *context, void *handle, uint8_t algo)
{
	(void) context;
	((struct iip_tcp_conn *) handle)->cc_algo = algo == IIP_TCP_CC_CUBIC ? IIP_TCP_CC_CUBIC : IIP_TCP_CC_NEWRENO;
}

/* Extension: a snapshot of a connection, for tools and tests. */
struct iip_tcp_info {
	uint8_t state;
	uint8_t opt_ts, opt_sack, opt_wscale;
	uint16_t snd_mss;
	uint32_t cwnd, ssthresh, snd_wnd, srtt_ms, rto_ms;
	uint32_t bytes_in_flight, bytes_queued;
	uint32_t rx_unconsumed;
};

static __iip_unused_fn void iip_tcp_get_info(void *context, void *handle, struct iip_tcp_info *info)
{
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	(void) context;
	info->state = c->state;
	info->opt_ts = c->opt_ts;
	info->opt_sack = c->opt_sack;
	info->opt_wscale = c->opt_wscale;
	info->snd_mss = c->snd_mss;
	info->cwnd = c->cwnd;
	info->ssthresh = c->ssthresh;
	info->snd_wnd = c->snd_wnd;
	info->srtt_ms = c->srtt8 >> 3;
	info->rto_ms = c->rto_ms;
	info->bytes_in_flight = c->snd_max - c->snd_una;
	info->bytes_queued = c->snd_queued - c->snd_una;
	info->rx_unconsumed = c->rx_unconsumed;
}

/*
 * ICMP destination unreachable about one of our segments (RFC 1191 path MTU
 * discovery, RFC 5927 validation): "fragmentation needed" lowers the path
 * MTU of the connection if the quoted sequence number is in flight.
 */
static void __iip_tcp_icmp_unreach(struct iip_workspace *ws, uint8_t code, uint16_t mtu, const uint8_t *inner, uint32_t inner_len, void *opaque)
{
	uint32_t ihl = (uint32_t) (inner[0] & 0x0f) * 4, src_be, dst_be, seq;
	uint16_t sport_be, dport_be;
	struct iip_tcp_conn *c;
	if (code != IIP_ICMP_CODE_FRAG_NEEDED || ihl < 20 || inner_len < ihl + 8)
		return; /* other codes are soft errors for TCP (RFC 5461) */
	__iip_memcpy(&src_be, inner + 12, 4);
	__iip_memcpy(&dst_be, inner + 16, 4);
	__iip_memcpy(&sport_be, inner + ihl, 2);
	__iip_memcpy(&dport_be, inner + ihl + 2, 2);
	seq = __iip_get_be32(inner + ihl + 4);
	c = __iip_tcp_lookup(ws, src_be, sport_be, dst_be, dport_be);
	if (!c || __iip_seq_lt(seq, c->snd_una) || !__iip_seq_lt(seq, c->snd_max))
		return;
	if (mtu < 576 || mtu >= c->pmtu)
		return; /* RFC 1191 / RFC 8201: ignore implausible values */
	IIP_STATS_INC(ws, tcp_icmp_mtu);
	c->pmtu = mtu;
	__iip_tcp_set_snd_mss(c);
	/* resend what was too big, without treating it as congestion (RFC 1191 6.4) */
	c->snd_nxt = c->snd_una;
	__iip_tcp_schedule_output(ws, c, opaque);
}
