/*
 * tcp_out.c: building and sending segments.
 *
 * __iip_tcp_xmit builds one segment (or one TSO frame) for any sequence
 * range of the send queue: fresh data and retransmissions go through the
 * same code.  The payload is chained by reference (zero copy) when the NIC
 * does scatter-gather, copied otherwise; the checksum is offloaded or
 * computed.  __iip_tcp_output decides what to send now: retransmissions
 * during loss recovery, new data within the congestion and peer windows
 * (Nagle, RFC 1122 4.2.3.4, and sender-side silly window avoidance, RFC 9293
 * 3.8.6.2.1), the FIN, and an ACK when one is owed.
 */

static uint32_t __iip_tcp_ts_now(struct iip_workspace *ws, struct iip_tcp_conn *c)
{
	/* RFC 7323 5.4: a per-connection offset hides the host's clock */
	return ws->now_ms + c->iss;
}

/* Bytes of receive window we can offer now (RFC 9293 3.8.6.2.2). */
static uint32_t __iip_tcp_rcv_space(struct iip_tcp_conn *c)
{
	uint32_t used = c->rx_unconsumed + c->ooo.cnt;
	uint32_t free_pkts = used < IIP_CONF_TCP_RX_BUF_PKTS ? IIP_CONF_TCP_RX_BUF_PKTS - used : 0;
	uint32_t space = free_pkts * (uint32_t) c->rcv_mss;
	uint32_t max = (uint32_t) 65535 << c->rcv_wscale;
	return __iip_min(space, max);
}

/*
 * The window field for the segment being sent, applying receiver-side silly
 * window avoidance and never moving the right edge left (RFC 9293
 * 3.8.6.2.1: shrinking the window is strongly discouraged).
 */
static uint16_t __iip_tcp_window_field(struct iip_tcp_conn *c, uint8_t syn)
{
	uint32_t space = __iip_tcp_rcv_space(c);
	uint32_t right = c->rcv_nxt + space;
	uint32_t wnd;
	if (__iip_seq_lt(right, c->rcv_adv))
		right = c->rcv_adv;
	else if (right - c->rcv_adv < __iip_min((uint32_t) IIP_CONF_TCP_RX_BUF_PKTS * c->rcv_mss / 2, (uint32_t) c->rcv_mss)
			&& __iip_seq_ge(c->rcv_adv, c->rcv_nxt))
		right = c->rcv_adv; /* the increase is too small to announce */
	wnd = right - c->rcv_nxt;
	if (syn) /* RFC 7323 2.2: the window of a SYN is never scaled */
		wnd = __iip_min(wnd, 65535U);
	else {
		/*
		 * Truncated to the scale (RFC 7323 2.3): never offer space we do
		 * not have.  Rounding up instead made the right edge creep beyond
		 * the buffer by up to 2^shift - 1 bytes per ACK.  The edge the
		 * peer sees may then lie a few bytes left of rcv_adv, which keeps
		 * the furthest edge ever offered, so data up to it is accepted.
		 */
		wnd = __iip_min(wnd >> c->rcv_wscale, 65535U);
	}
	c->rcv_wnd_sent = syn ? wnd : wnd << c->rcv_wscale;
	if (__iip_seq_gt(c->rcv_nxt + c->rcv_wnd_sent, c->rcv_adv))
		c->rcv_adv = c->rcv_nxt + c->rcv_wnd_sent;
	return (uint16_t) wnd;
}

/*
 * The SACK blocks to send (RFC 2018 4): ranges held out of order; first the
 * one holding the latest arrival, then those of the arrivals before it
 * (repeating the most recently reported blocks), then the rest.
 */
static uint8_t __iip_tcp_sack_blocks(struct iip_tcp_conn *c, struct iip_seq_range *out, uint8_t max)
{
	uint8_t n = 0, i, k;
	struct iip_pb *pb = c->ooo.head;
	struct iip_seq_range all[IIP_TCP_SACK_BLOCKS_MAX * 4];
	uint8_t cnt = 0;
	while (pb && cnt < sizeof(all) / sizeof(all[0])) {
		uint32_t s = pb->seq, e = pb->seq + pb->len + pb->fin;
		pb = pb->next;
		while (pb && __iip_seq_le(pb->seq, e)) {
			if (__iip_seq_gt(pb->seq + pb->len + pb->fin, e))
				e = pb->seq + pb->len + pb->fin;
			pb = pb->next;
		}
		all[cnt].start = s;
		all[cnt].end = e;
		cnt++;
	}
	for (k = 0; k < c->sack_send_cnt && n < max; k++)
		for (i = 0; i < cnt; i++)
			if (all[i].start != all[i].end && __iip_seq_le(all[i].start, c->sack_send[k].start)
					&& __iip_seq_ge(all[i].end, c->sack_send[k].end)) {
				out[n++] = all[i];
				all[i].start = all[i].end;
				break;
			}
	for (i = 0; i < cnt && n < max; i++)
		if (all[i].start != all[i].end)
			out[n++] = all[i];
	return n;
}

/* Options of a segment; returns their length (a multiple of 4). */
static uint8_t __iip_tcp_build_opts(struct iip_workspace *ws, struct iip_tcp_conn *c, uint8_t flags, uint8_t *o)
{
	uint8_t *p = o;
	if (flags & IIP_TCP_FLAG_SYN) {
		/* RFC 9293 3.7.1 / RFC 6691: our MSS is the MTU minus fixed headers */
		p[0] = IIP_TCP_OPT_MSS;
		p[1] = 4;
		p[2] = (uint8_t) (c->rcv_mss >> 8);
		p[3] = (uint8_t) c->rcv_mss;
		p += 4;
		/* on a SYN-ACK, only what the peer offered (RFC 7323 1.3, RFC 2018 2) */
		if (!(flags & IIP_TCP_FLAG_ACK) || c->opt_sack) {
			p[0] = IIP_TCP_OPT_NOP;
			p[1] = IIP_TCP_OPT_NOP;
			p[2] = IIP_TCP_OPT_SACK_PERM;
			p[3] = 2;
			p += 4;
		}
		if (!(flags & IIP_TCP_FLAG_ACK) || c->opt_ts)
			p = __iip_tcp_opt_put_ts(p, __iip_tcp_ts_now(ws, c), (flags & IIP_TCP_FLAG_ACK) ? c->ts_recent : 0);
		if (!(flags & IIP_TCP_FLAG_ACK) || c->opt_wscale) {
			p[0] = IIP_TCP_OPT_NOP;
			p[1] = IIP_TCP_OPT_WSCALE;
			p[2] = 3;
			p[3] = c->rcv_wscale;
			p += 4;
		}
		return (uint8_t) (p - o);
	}
	if (c->opt_ts)
		p = __iip_tcp_opt_put_ts(p, __iip_tcp_ts_now(ws, c), c->ts_recent);
	if (c->opt_sack && c->ooo.cnt && !(flags & IIP_TCP_FLAG_RST)) {
		struct iip_seq_range b[IIP_TCP_SACK_BLOCKS_MAX];
		uint8_t n = __iip_tcp_sack_blocks(c, b, (uint8_t) (c->opt_ts ? 3 : 4)), i;
		if (n) {
			p[0] = IIP_TCP_OPT_NOP;
			p[1] = IIP_TCP_OPT_NOP;
			p[2] = IIP_TCP_OPT_SACK;
			p[3] = (uint8_t) (2 + 8 * n);
			p += 4;
			for (i = 0; i < n; i++, p += 8) {
				__iip_put_be32(p, b[i].start);
				__iip_put_be32(p + 4, b[i].end);
			}
		}
	}
	return (uint8_t) (p - o);
}

/* The send-queue packet holding sequence number seq (NULL if none). */
static struct iip_pb *__iip_tcp_txq_find(struct iip_tcp_conn *c, uint32_t seq)
{
	struct iip_pb *pb = c->tx_next_pb;
	if (pb && __iip_seq_le(pb->seq, seq) && __iip_seq_lt(seq, pb->seq + pb->len))
		return pb;
	for (pb = c->txq.head; pb; pb = pb->next)
		if (__iip_seq_lt(seq, pb->seq + pb->len))
			return __iip_seq_le(pb->seq, seq) ? pb : NULL;
	return NULL;
}

/*
 * Sends one segment covering [seq, seq + len) of the send queue with the
 * given flags (a TSO frame when len exceeds the MSS).  Returns 0 on success.
 */
static uint16_t __iip_tcp_xmit(struct iip_workspace *ws, struct iip_tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags, void *opaque)
{
	uint8_t opts[40];
	uint8_t optlen = __iip_tcp_build_opts(ws, c, flags, opts);
	uint16_t th_len = (uint16_t) (sizeof(struct iip_tcp_hdr) + optlen);
	uint8_t sg = len && iip_ops_nic_feature_offload_tx_scatter_gather(opaque);
	uint8_t csum_off = iip_ops_nic_feature_offload_tcp_tx_checksum(opaque);
	void *out = iip_ops_pkt_alloc(opaque);
	uint16_t l2_len;
	struct iip_ip4_hdr *ip;
	struct iip_tcp_hdr *th;
	uint8_t *payload;
	uint32_t payload_sum = 0;
	if (__iip_unlikely(!out)) {
		IIP_STATS_INC(ws, pkt_alloc_failed);
		return 1;
	}
	l2_len = iip_ops_l2_hdr_len(out, opaque);
	ip = (struct iip_ip4_hdr *) ((uint8_t *) iip_ops_pkt_get_data(out, opaque) + l2_len);
	th = (struct iip_tcp_hdr *) (ip + 1);
	payload = (uint8_t *) th + th_len;
	if (len) {
		struct iip_pb *pb = __iip_tcp_txq_find(c, seq);
		uint32_t done = 0, off;
		if (!pb) {
			iip_ops_pkt_free(out, opaque);
			return 1;
		}
		off = seq - pb->seq;
		iip_ops_pkt_set_len(out, (uint16_t) (l2_len + sizeof(*ip) + th_len + (sg ? 0 : len)), opaque);
		while (done < len && pb) {
			uint32_t n = __iip_min(pb->len - off, len - done);
			const uint8_t *src = (const uint8_t *) iip_ops_pkt_get_data(pb->pkt, opaque) + off;
			if (sg) {
				void *cl = __iip_pkt_clone_slice(ws, pb->pkt, (uint16_t) off, (uint16_t) n, opaque);
				if (!cl) {
					iip_ops_pkt_free(out, opaque);
					return 1;
				}
				iip_ops_pkt_scatter_gather_chain_append(out, cl, opaque);
				if (!csum_off) {
					uint32_t s = __iip_csum_raw(src, n);
					payload_sum = __iip_csum_add(payload_sum, (done & 1) ? __iip_csum_swap(s) : s);
				}
			} else
				__iip_memcpy(payload + done, src, n);
			done += n;
			flags |= pb->tcp_flags;
			if (off + n < pb->len)
				break; /* the next segment starts inside this packet */
			off = 0;
			pb = pb->next;
		}
		if (done != len) {
			iip_ops_pkt_free(out, opaque);
			return 1;
		}
		/* where the next segment starts: new data then needs no walk from the head */
		c->tx_next_pb = pb;
		if (!sg && !csum_off)
			payload_sum = __iip_csum_raw(payload, len);
	} else
		iip_ops_pkt_set_len(out, (uint16_t) (l2_len + sizeof(*ip) + th_len), opaque);
	th->src_be = c->local_port_be;
	th->dst_be = c->peer_port_be;
	th->seq_be = __iip_htonl(seq);
	th->ack_seq_be = (flags & IIP_TCP_FLAG_ACK) ? __iip_htonl(c->rcv_nxt) : 0;
	if (flags & IIP_TCP_FLAG_ACK)
		c->last_ack_sent = c->rcv_nxt; /* RFC 7323 4.3 Last.ACK.sent, the SYN-ACK included */
	((uint8_t *) th)[12] = (uint8_t) ((th_len / 4) << 4);
	((uint8_t *) th)[13] = flags;
	th->win_be = __iip_htons(__iip_tcp_window_field(c, (flags & IIP_TCP_FLAG_SYN) != 0));
	th->csum_be = 0;
	/* RFC 9293 3.8.5 / RFC 6093: the urgent pointer is the offset of the
	 * octet after the urgent data (the whole segment); 0 would be invalid */
	th->urg_p_be = (flags & IIP_TCP_FLAG_URG) ? __iip_htons((uint16_t) len) : 0;
	__iip_memcpy(th + 1, opts, optlen);
	__iip_ip4_hdr_fill(ws, out, ip, IIP_IP4_PROTO_TCP, c->local_ip4_be, c->peer_ip4_be,
			   (uint16_t) (sizeof(*ip) + th_len + len), ws->ip4_id++, IIP_IP4_OFF_DF, opaque);
	if (csum_off) {
		/* the NIC expects the pseudo-header sum in the field */
		th->csum_be = (uint16_t) __iip_csum_fold32(__iip_csum_pseudo(c->local_ip4_be, c->peer_ip4_be, IIP_IP4_PROTO_TCP, (uint16_t) (th_len + len)));
		iip_ops_nic_offload_tcp_tx_checksum_mark(out, opaque);
		if (len > c->snd_mss)
			iip_ops_nic_offload_tcp_tx_tso_mark(out, opaque);
	} else {
		uint32_t s = __iip_csum_pseudo(c->local_ip4_be, c->peer_ip4_be, IIP_IP4_PROTO_TCP, (uint16_t) (th_len + len));
		s = __iip_csum_add(s, __iip_csum_raw(th, th_len));
		s = __iip_csum_add(s, (th_len & 1) ? __iip_csum_swap(payload_sum) : payload_sum);
		th->csum_be = __iip_csum_finish(s);
	}
	__iip_l2_output(ws, out, c->local_mac, c->peer_mac, IIP_ETHERTYPE_IP4, opaque);
	IIP_STATS_INC(ws, tx_tcp_segs);
	if (flags & IIP_TCP_FLAG_ACK) {
		c->ack_pending = 0;
		c->ack_now = 0;
		c->segs_unacked = 0;
		__iip_tcp_timer_off(c, IIP_TCP_TIMER_DELACK);
	}
	return 0;
}

/*
 * A segment without data: <SEQ=SND.NXT><ACK=RCV.NXT> (RFC 9293 3.10.7.4).
 * The RFC's SND.NXT is our snd_max: snd_nxt is pulled back to snd_una to
 * resend after a time-out, and an ACK numbered there lies left of the
 * peer's RCV.NXT when the peer got data whose ACKs were lost; the peer
 * drops it as unacceptable and answers with an ACK of its own, which we
 * may drop the same way: an endless exchange of ACKs both sides ignore.
 * Only a zero-window probe in progress keeps snd_nxt (the probe byte
 * beyond it was not accepted).
 */
static void __iip_tcp_send_ack(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	__iip_tcp_xmit(ws, c, c->zwp_probing ? c->snd_nxt : c->snd_max, 0, IIP_TCP_FLAG_ACK, opaque);
}

/* Arms the retransmission timer unless it runs (RFC 6298 5.1). */
static void __iip_tcp_rtx_arm(struct iip_workspace *ws, struct iip_tcp_conn *c)
{
	if (!(c->timers_on & IIP_TCP_TIMER_RTX))
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
}

/*
 * The data a segment may carry now (RFC 9293 3.7.1 Eff.snd.MSS, RFC 6691:
 * the sender MUST reduce the data by the TCP options it includes).
 * snd_mss already leaves room for the timestamp option; SACK blocks, sent
 * while we hold data out of order, take up to 28 more bytes (4 + 3 blocks
 * beside timestamps, 4 + 4 blocks = 36 without).
 */
static uint16_t __iip_tcp_mss_now(struct iip_tcp_conn *c)
{
	if (c->opt_sack && c->ooo.cnt)
		return (uint16_t) (c->snd_mss - (c->opt_ts ? 28 : 36));
	return c->snd_mss;
}

/* Largest payload of one send: the MSS, or a TSO frame of whole MSS multiples. */
static uint32_t __iip_tcp_max_burst(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	/*
	 * The NIC cuts TSO frames at MTU - headers; that equals our MSS only
	 * when the peer's MSS and the path MTU are not the limit and no SACK
	 * blocks change the header length.
	 */
	uint16_t opt = c->opt_ts ? 12 : 0;
	if (c->snd_mss + opt + 40 == __iip_mtu(ws) && !c->ooo.cnt
			&& iip_ops_nic_feature_offload_tx_scatter_gather(opaque)
			&& iip_ops_nic_feature_offload_tcp_tx_tso(opaque)
			&& iip_ops_nic_feature_offload_tcp_tx_checksum(opaque))
		return (IIP_CONF_TCP_TSO_MAX / c->snd_mss) * c->snd_mss;
	return __iip_tcp_mss_now(c);
}

/* Sends [seq, seq + len) as retransmission; len is cut to one MSS. */
static void __iip_tcp_retransmit(struct iip_workspace *ws, struct iip_tcp_conn *c, uint32_t seq, uint32_t len, void *opaque)
{
	uint8_t flags = IIP_TCP_FLAG_ACK;
	if (len > __iip_tcp_mss_now(c))
		len = __iip_tcp_mss_now(c);
	if (c->fin_queued && __iip_seq_ge(seq + len, c->fin_seq) && __iip_seq_ge(c->snd_max, c->fin_seq + 1)) {
		len = c->fin_seq - seq;
		flags |= IIP_TCP_FLAG_FIN;
	}
	if (!__iip_tcp_xmit(ws, c, seq, len, flags, opaque)) {
		IIP_STATS_INC(ws, tx_tcp_retrans);
		if (c->rtt_timing && __iip_seq_le(seq, c->rtt_seq))
			c->rtt_timing = 0; /* Karn: never time a retransmitted segment */
	}
	__iip_tcp_rtx_arm(ws, c);
}

static uint32_t __iip_tcp_sacked_bytes(struct iip_tcp_conn *c);
static uint8_t __iip_tcp_next_hole(struct iip_tcp_conn *c, uint32_t from, uint32_t *start, uint32_t *len);
static uint32_t __iip_tcp_pipe(struct iip_tcp_conn *c);

/*
 * Sends what may be sent now.  Called at the end of an iip_run batch for each
 * connection with pending output, or right away for API calls made outside
 * iip_run.
 */
static void __iip_tcp_output(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	uint8_t sent = 0;
	switch (c->state) {
	case IIP_TCP_STATE_ESTABLISHED:
	case IIP_TCP_STATE_CLOSE_WAIT:
	case IIP_TCP_STATE_FIN_WAIT_1:
	case IIP_TCP_STATE_CLOSING:
	case IIP_TCP_STATE_LAST_ACK:
		break;
	case IIP_TCP_STATE_SYN_RECEIVED: /* unacceptable segments, challenge ACKs (RFC 9293 3.10.7.4, RFC 5961) */
	case IIP_TCP_STATE_FIN_WAIT_2:
	case IIP_TCP_STATE_TIME_WAIT:
		if (c->ack_pending || c->ack_now)
			__iip_tcp_send_ack(ws, c, opaque);
		return;
	default:
		return;
	}
	/* loss recovery with SACK (RFC 6675 5): retransmit holes while pipe < cwnd */
	if (c->in_recovery && c->opt_sack) {
		uint32_t hs, hl;
		while (__iip_tcp_pipe(c) < c->cwnd
				&& __iip_tcp_next_hole(c, __iip_seq_gt(c->high_rxt, c->snd_una) ? c->high_rxt : c->snd_una, &hs, &hl)) {
			__iip_tcp_retransmit(ws, c, hs, hl, opaque);
			c->high_rxt = hs + __iip_min(hl, (uint32_t) __iip_tcp_mss_now(c));
			sent = 1;
		}
	}
	for (;;) {
		uint32_t flight = c->in_recovery && c->opt_sack ? __iip_tcp_pipe(c) : c->snd_nxt - c->snd_una;
		/* RFC 3042 limited transmit: each of the first two duplicate ACKs
		 * lets one new segment beyond cwnd go, within the peer's window */
		uint32_t lt = c->in_recovery ? 0 : (uint32_t) __iip_min(c->dupacks, 2) * c->snd_mss;
		uint32_t wnd = __iip_min(c->snd_wnd, c->cwnd + lt);
		uint32_t usable, avail, len, seg_max;
		uint8_t flags = IIP_TCP_FLAG_ACK, is_rexmit;
		if (!__iip_seq_lt(c->snd_nxt, c->snd_queued)) {
			/* no data left: the FIN, once, after everything queued */
			if (c->fin_queued && c->snd_nxt == c->fin_seq) {
				if (!__iip_tcp_xmit(ws, c, c->snd_nxt, 0, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN, opaque)) {
					c->snd_nxt++;
					if (__iip_seq_gt(c->snd_nxt, c->snd_max))
						c->snd_max = c->snd_nxt;
					__iip_tcp_rtx_arm(ws, c);
					sent = 1;
				} else
					__iip_tcp_rtx_arm(ws, c); /* no packet: try again at the RTO */
			}
			break;
		}
		avail = c->snd_queued - c->snd_nxt;
		usable = wnd > flight ? wnd - flight : 0;
		seg_max = __iip_tcp_max_burst(ws, c, opaque);
		len = __iip_min(__iip_min(avail, usable), seg_max);
		if (!len) {
			/* zero window: the persist timer probes it (RFC 9293 3.8.6.1) */
			if (!c->snd_wnd && !(c->timers_on & IIP_TCP_TIMER_RTX)) {
				c->zwp_probing = 1;
				__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
			}
			break;
		}
		is_rexmit = __iip_seq_lt(c->snd_nxt, c->snd_max);
		if (len < __iip_tcp_mss_now(c) && !is_rexmit) {
			if (len == avail) {
				/* Nagle (RFC 1122 4.2.3.4): one small segment in flight at most */
				if (!c->nodelay && c->snd_nxt != c->snd_una && !c->fin_queued)
					break;
			} else if (len < c->max_snd_wnd / 2 && c->snd_nxt != c->snd_una)
				break; /* sender SWS avoidance: wait for a worthwhile window */
		}
		if (len == avail) {
			flags |= IIP_TCP_FLAG_PSH;
			if (c->fin_queued && c->snd_nxt + len == c->fin_seq)
				flags |= IIP_TCP_FLAG_FIN;
		}
		if (__iip_tcp_xmit(ws, c, c->snd_nxt, len, flags, opaque)) {
			/* no packet (allocation failed): without a timer nothing
			 * would ever send this data; try again at the RTO */
			__iip_tcp_rtx_arm(ws, c);
			break;
		}
		if (is_rexmit)
			IIP_STATS_INC(ws, tx_tcp_retrans);
		else if (!c->rtt_timing && !c->opt_ts) {
			c->rtt_timing = 1;
			c->rtt_seq = c->snd_nxt;
			c->rtt_start_ms = ws->now_ms;
		}
		c->snd_nxt += len + ((flags & IIP_TCP_FLAG_FIN) ? 1 : 0);
		if (__iip_seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		c->zwp_probing = 0;
		__iip_tcp_rtx_arm(ws, c);
		sent = 1;
	}
	if (!sent && c->ack_now)
		__iip_tcp_send_ack(ws, c, opaque);
	else if (!sent && c->ack_pending && !(c->timers_on & IIP_TCP_TIMER_DELACK))
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_DELACK, &c->t_delack, IIP_CONF_TCP_DELAYED_ACK_MS);
}

/* Queues a connection for output at the end of the batch, or outputs now. */
static void __iip_tcp_schedule_output(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	if (ws->in_run) {
		if (!c->in_out_list) {
			c->in_out_list = 1;
			c->out_next = ws->out_list;
			ws->out_list = c;
		}
		return;
	}
	__iip_tcp_output(ws, c, opaque);
	__iip_flush_outside_run(ws, opaque);
}

/*
 * A RST answering a segment that belongs to no connection (RFC 9293
 * 3.10.7.1): with ACK set, <SEQ=SEG.ACK><CTL=RST>; otherwise
 * <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
 */
static void __iip_tcp_send_rst_reply(struct iip_workspace *ws, uint8_t mac[], struct iip_ip4_rx *rx,
				     struct iip_tcp_hdr *in, uint32_t seg_len, void *opaque)
{
	struct iip_tcp_conn tmp;
	uint8_t in_flags = IIP_TCP_HDR_FLAGS(in);
	__iip_memset(&tmp, 0, sizeof(tmp));
	tmp.local_ip4_be = rx->ip->dst_be;
	tmp.peer_ip4_be = rx->ip->src_be;
	tmp.local_port_be = in->dst_be;
	tmp.peer_port_be = in->src_be;
	__iip_memcpy(tmp.local_mac, mac, iip_ops_l2_addr_len(opaque));
	__iip_memcpy(tmp.peer_mac, iip_ops_l2_hdr_src_ptr(rx->pkt, opaque), iip_ops_l2_addr_len(opaque));
	tmp.snd_mss = 536;
	if (in_flags & IIP_TCP_FLAG_ACK)
		__iip_tcp_xmit(ws, &tmp, __iip_ntohl(in->ack_seq_be), 0, IIP_TCP_FLAG_RST, opaque);
	else {
		tmp.rcv_nxt = __iip_ntohl(in->seq_be) + seg_len;
		__iip_tcp_xmit(ws, &tmp, 0, 0, IIP_TCP_FLAG_RST | IIP_TCP_FLAG_ACK, opaque);
	}
	IIP_STATS_INC(ws, tx_tcp_rst);
}
