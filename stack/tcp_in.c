/*
 * tcp_in.c: the receive path (RFC 9293 3.10.7), in the order of the RFC's
 * "SEGMENT ARRIVES" steps: validation, demultiplexing, the header-prediction
 * fast path for in-order data and pure ACKs (seed 004), then the general
 * path: CLOSED/LISTEN (tcp_listen.c), SYN-SENT, and for synchronized states
 * the sequence check (with PAWS, RFC 7323 5), RST and SYN (RFC 5961), the
 * ACK, the data, and the FIN.
 */

/* A validated segment. */
struct iip_tcp_seg {
	struct iip_tcp_hdr *th;
	uint32_t seq;
	uint32_t ack;
	uint32_t payload_len;
	uint32_t seg_len;	/* payload + SYN + FIN */
	uint16_t win;		/* unscaled window field */
	uint8_t flags;
	struct iip_tcp_opts opts;
};

static void __iip_tcp_listen_input(struct iip_workspace *ws, uint8_t mac[], struct iip_ip4_rx *rx, struct iip_tcp_seg *s, void *opaque);

/* RFC 5961 7: challenge ACKs, at most IIP_CONF_TCP_CHALLENGE_ACK_LIMIT per second. */
static void __iip_tcp_challenge_ack(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	uint32_t sec = ws->now_ms / 1000;
	if (sec != ws->challenge_ack_sec) {
		ws->challenge_ack_sec = sec;
		ws->challenge_ack_cnt = 0;
	}
	if (ws->challenge_ack_cnt >= IIP_CONF_TCP_CHALLENGE_ACK_LIMIT) {
		IIP_STATS_INC(ws, rx_tcp_challenge_ack_limited);
		return;
	}
	ws->challenge_ack_cnt++;
	IIP_STATS_INC(ws, rx_tcp_challenge_ack);
	/* sent with the batch's output: still one ACK per connection per batch */
	c->ack_now = 1;
	__iip_tcp_schedule_output(ws, c, opaque);
}

/*
 * New in-order data of len bytes arrived: ACK at once once two full-sized
 * segments are unacknowledged (RFC 5681 4.2, RFC 1122 4.2.3.2), else let
 * the delayed-ACK timer run.  A large (LRO/GRO) packet counts as the
 * segments it carries, so it is acknowledged at once.
 */
static void __iip_tcp_ack_policy(struct iip_tcp_conn *c, uint32_t len)
{
	uint32_t segs = len > c->rcv_mss ? len / c->rcv_mss : 1;
	if (c->segs_unacked + segs >= 2)
		c->ack_now = 1;
	else {
		c->segs_unacked++;
		c->ack_pending = 1;
	}
}

/* Hands a packet's new bytes to the application (seed 001: head_off / tail_off). */
static void __iip_tcp_deliver(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, uint32_t head_off, uint32_t tail_off, void *opaque)
{
	if (c->app_notified) {
		c->rx_unconsumed++;
		iip_ops_tcp_payload(ws, c, pkt, c->app_opaque, (uint16_t) head_off, (uint16_t) tail_off, opaque);
	} else
		IIP_STATS_INC(ws, rx_tcp_data_after_close);
	iip_ops_pkt_free(pkt, opaque);
}

/* RFC 9293 3.10.7.4, eighth step: our peer's FIN, in sequence. */
static void __iip_tcp_fin_in(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	c->rcv_nxt++;
	c->fin_rcvd = 1;
	c->ack_now = 1;
	switch (c->state) {
	case IIP_TCP_STATE_SYN_RECEIVED:
	case IIP_TCP_STATE_ESTABLISHED:
		c->state = IIP_TCP_STATE_CLOSE_WAIT;
		break;
	case IIP_TCP_STATE_FIN_WAIT_1:
		if (c->snd_una == c->snd_max && c->snd_max == c->fin_seq + 1)
			__iip_tcp_enter_time_wait(ws, c, opaque);
		else
			c->state = IIP_TCP_STATE_CLOSING;
		break;
	case IIP_TCP_STATE_FIN_WAIT_2:
		__iip_tcp_enter_time_wait(ws, c, opaque);
		break;
	default:
		break;
	}
}

/*
 * Delivers a packet and processes the FIN it may carry.  From ESTABLISHED
 * the state moves to CLOSE-WAIT before the application sees the FIN, so an
 * iip_tcp_close from the payload callback leads to LAST-ACK (RFC 9293 3.6
 * case 2) rather than to FIN-WAIT-1, CLOSING and a needless TIME-WAIT; in
 * the other states the FIN is processed after the delivery, because
 * entering TIME-WAIT ends the application's handle.
 */
static void __iip_tcp_deliver_fin(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, uint32_t head_off, uint32_t tail_off,
				  uint8_t fin, void *opaque)
{
	uint8_t early = fin && (c->state == IIP_TCP_STATE_ESTABLISHED || c->state == IIP_TCP_STATE_SYN_RECEIVED);
	if (early)
		__iip_tcp_fin_in(ws, c, opaque);
	__iip_tcp_deliver(ws, c, pkt, head_off, tail_off, opaque);
	if (fin && !early)
		__iip_tcp_fin_in(ws, c, opaque);
}

/* Delivers queued out-of-order segments that became in order. */
static void __iip_tcp_ooo_drain(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	struct iip_pb *pb;
	while ((pb = c->ooo.head) && __iip_seq_le(pb->seq, c->rcv_nxt) && !c->fin_rcvd) {
		uint32_t seq = pb->seq, end = pb->seq + pb->len;
		void *pkt = pb->pkt;
		uint8_t fin = pb->fin;
		__iip_q_remove(&c->ooo, pb);
		pb->pkt = NULL;
		__iip_pb_put(ws, pb);
		if (__iip_seq_gt(end, c->rcv_nxt) || (fin && end == c->rcv_nxt)) {
			uint32_t head_off = c->rcv_nxt - seq;
			/* what lay beyond the window when it arrived was cut from its length */
			uint32_t tail_off = PB_TCP_PAYLOAD_LEN(pkt) - (end - seq);
			c->rcv_nxt = end;
			__iip_tcp_deliver_fin(ws, c, pkt, head_off, tail_off, fin, opaque);
		} else
			iip_ops_pkt_free(pkt, opaque);
	}
	c->ack_now = 1; /* RFC 5681 4.2: ACK at once when a gap is filled */
}

/*
 * Holds a segment that arrived ahead of rcv_nxt (bounded, sorted; wholly
 * duplicate data is dropped).  Takes ownership of pkt.
 */
static void __iip_tcp_ooo_insert(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, uint32_t seq, uint32_t len, uint8_t fin, void *opaque)
{
	struct iip_pb *at, *pb;
	c->ack_now = 1; /* RFC 5681 4.2: out-of-order data is ACKed at once */
	{
		/* RFC 2018 4: remember the latest arrivals, newest first, to order the blocks */
		uint8_t k = c->sack_send_cnt < IIP_TCP_SACK_BLOCKS_MAX ? c->sack_send_cnt : IIP_TCP_SACK_BLOCKS_MAX - 1;
		for (; k > 0; k--)
			c->sack_send[k] = c->sack_send[k - 1];
		c->sack_send[0].start = seq;
		c->sack_send[0].end = seq + len + fin;
		if (c->sack_send_cnt < IIP_TCP_SACK_BLOCKS_MAX)
			c->sack_send_cnt++;
	}
	for (at = c->ooo.head; at && __iip_seq_lt(at->seq, seq); at = at->next)
		;
	/* covered by its neighbours? */
	if ((at && at->seq == seq && __iip_seq_ge(at->seq + at->len, seq + len) && (at->fin || !fin))
			|| (at && at->prev && __iip_seq_ge(at->prev->seq + at->prev->len, seq + len) && !fin)
			|| (!at && c->ooo.tail && __iip_seq_ge(c->ooo.tail->seq + c->ooo.tail->len, seq + len) && !fin)) {
		IIP_STATS_INC(ws, rx_tcp_dup);
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	if (c->ooo.cnt >= IIP_CONF_TCP_OOO_MAX_PKTS || !(pb = __iip_pb_get(ws, pkt))) {
		IIP_STATS_INC(ws, rx_tcp_ooo_dropped);
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	pb->seq = seq;
	pb->len = len;
	pb->fin = fin;
	__iip_q_insert_before(&c->ooo, at, pb);
	IIP_STATS_INC(ws, rx_tcp_ooo);
}

/*
 * Text processing (seventh step) for a segment whose sequence range was
 * found acceptable; takes ownership of pkt.
 */
static void __iip_tcp_data_in(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, struct iip_tcp_seg *s, void *opaque)
{
	uint8_t fin = (s->flags & IIP_TCP_FLAG_FIN) != 0;
	uint32_t len = s->payload_len, seq = s->seq;
	uint32_t wnd_end = c->rcv_adv;
	uint32_t tail_off = 0;
	if (c->fin_rcvd || (!len && !fin)) {
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	/* cut what lies beyond the window we offered (RFC 9293 3.10.7.4) */
	if (__iip_seq_gt(seq + len, wnd_end) && __iip_seq_ge(wnd_end, c->rcv_nxt)) {
		uint32_t over = seq + len - wnd_end;
		if (over > len)
			over = len;
		tail_off = over;
		len -= over;
		fin = 0;
	}
	if (__iip_seq_gt(seq, c->rcv_nxt)) {
		if (!len && !fin) {
			iip_ops_pkt_free(pkt, opaque);
			return;
		}
		/* out of order: keep it for later, trimmed length only */
		__iip_tcp_ooo_insert(ws, c, pkt, seq, len, fin, opaque);
		return;
	}
	if (__iip_seq_le(seq + len, c->rcv_nxt) && !(fin && seq + len == c->rcv_nxt)) {
		/* nothing new: a duplicate; ACK so the peer learns (RFC 9293 3.10.7.4) */
		IIP_STATS_INC(ws, rx_tcp_dup);
		c->ack_now = 1;
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	{
		uint32_t head_off = c->rcv_nxt - seq;
		c->rcv_nxt = seq + len;
		__iip_tcp_ack_policy(c, len);
		if (fin && !c->app_notified) {
			iip_ops_pkt_free(pkt, opaque);
			__iip_tcp_fin_in(ws, c, opaque);
			return;
		}
		__iip_tcp_deliver_fin(ws, c, pkt, head_off, tail_off, fin, opaque);
	}
	if (!fin && c->ooo.cnt)
		__iip_tcp_ooo_drain(ws, c, opaque);
}

/*
 * New data acknowledged: release acknowledged packets (iip_ops_tcp_acked),
 * sample the RTT, grow the window, manage recovery and the timer.
 * Returns 1 if the connection was closed by this ACK (LAST-ACK).
 */
static uint8_t __iip_tcp_ack_advance(struct iip_workspace *ws, struct iip_tcp_conn *c, uint32_t ack, struct iip_tcp_seg *s, void *opaque)
{
	uint32_t acked = ack - c->snd_una;
	struct iip_pb *pb;
	/* RTT: timestamps when negotiated (RFC 7323 4.1), else Karn's timing */
	if (c->opt_ts && s->opts.has_ts && s->opts.ts_ecr)
		__iip_tcp_rtt_sample(c, __iip_tcp_ts_now(ws, c) - s->opts.ts_ecr);
	else if (c->rtt_timing && __iip_seq_gt(ack, c->rtt_seq)) {
		__iip_tcp_rtt_sample(c, ws->now_ms - c->rtt_start_ms);
		c->rtt_timing = 0;
	}
	c->backoff = 0;
	c->retries = 0;
	c->snd_una = ack;
	if (__iip_seq_lt(c->snd_nxt, ack))
		c->snd_nxt = ack;
	/* RFC 9293 3.10.7.4: acknowledged data leaves the retransmission queue */
	while ((pb = c->txq.head) && __iip_seq_le(pb->seq + pb->len, ack)) {
		__iip_q_remove(&c->txq, pb);
		if (pb == c->tx_next_pb)
			c->tx_next_pb = NULL;
		if (c->app_notified)
			iip_ops_tcp_acked(ws, c, pb->pkt, c->app_opaque, opaque);
		__iip_pb_free(ws, pb, opaque);
	}
	if (c->scoreboard_cnt)
		__iip_tcp_scoreboard_prune(c);
	if (c->in_recovery) {
		if (__iip_seq_ge(ack, c->recover)) {
			/* full ACK (RFC 6582 3.2 step 3): deflate to ssthresh */
			c->in_recovery = 0;
			c->cwnd = __iip_min(c->ssthresh, __iip_max(c->snd_max - c->snd_una, (uint32_t) c->snd_mss) + c->snd_mss);
			c->dupacks = 0;
		} else if (!c->opt_sack) {
			/* partial ACK (RFC 6582 3.2 step 4): resend the next hole */
			__iip_tcp_retransmit(ws, c, c->snd_una, __iip_min((uint32_t) c->snd_mss, c->snd_max - c->snd_una), opaque);
			c->cwnd = (c->cwnd > acked ? c->cwnd - acked : 0) + c->snd_mss;
		}
	} else {
		c->dupacks = 0;
		__iip_tcp_cc_on_ack(ws, c, acked);
	}
	/* RFC 6298 5.2 / 5.3 */
	if (c->snd_una == c->snd_max)
		__iip_tcp_timer_off(c, IIP_TCP_TIMER_RTX);
	else
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
	/* our FIN acknowledged */
	if (c->fin_queued && c->snd_una == c->fin_seq + 1) {
		switch (c->state) {
		case IIP_TCP_STATE_FIN_WAIT_1:
			c->state = IIP_TCP_STATE_FIN_WAIT_2;
			__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_CLOSE, &c->t_close, IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS);
			break;
		case IIP_TCP_STATE_CLOSING:
			__iip_tcp_enter_time_wait(ws, c, opaque);
			break;
		case IIP_TCP_STATE_LAST_ACK:
			__iip_tcp_conn_release(ws, c, opaque);
			return 1;
		default:
			break;
		}
	}
	return 0;
}

/* RFC 9293 3.10.7.4 window update rule. */
static void __iip_tcp_window_update(struct iip_workspace *ws, struct iip_tcp_conn *c, struct iip_tcp_seg *s)
{
	if (__iip_seq_lt(c->snd_wl1, s->seq) || (c->snd_wl1 == s->seq && __iip_seq_le(c->snd_wl2, s->ack))) {
		c->snd_wnd = (uint32_t) s->win << c->snd_wscale;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (c->snd_wnd > c->max_snd_wnd)
			c->max_snd_wnd = c->snd_wnd;
		if (c->snd_wnd && c->zwp_probing) {
			/*
			 * The zero window opened: whatever was sent beyond it was
			 * dropped, so sending resumes at SND.UNA now, not after the
			 * backed-off persist timer; the timer restarts at the RTO.
			 */
			c->zwp_probing = 0;
			c->backoff = 0;
			c->snd_nxt = c->snd_una;
			c->rtt_timing = 0; /* Karn: what follows may be resent */
			if (c->snd_una != c->snd_max)
				__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx, c->rto_ms);
		}
	}
}

/*
 * The ACK field (fifth step) in a synchronized state.  Returns 0 to go on
 * with the segment, 1 if it was consumed (dropped, or the connection ended).
 */
static uint8_t __iip_tcp_ack_in(struct iip_workspace *ws, struct iip_tcp_conn *c, struct iip_tcp_seg *s, void *opaque)
{
	uint32_t old_wnd = c->snd_wnd, sacked_before;
	uint8_t is_dup;
	if (__iip_seq_gt(s->ack, c->snd_max)) {
		/* acknowledges something not yet sent: ACK and drop */
		IIP_STATS_INC(ws, rx_tcp_bad_ack);
		c->ack_now = 1;
		__iip_tcp_schedule_output(ws, c, opaque);
		return 1;
	}
	if (__iip_seq_lt(s->ack, c->snd_una - c->max_snd_wnd)) {
		/* RFC 5961 5.2: too old to be genuine */
		IIP_STATS_INC(ws, rx_tcp_bad_ack);
		__iip_tcp_challenge_ack(ws, c, opaque);
		return 1;
	}
	sacked_before = c->scoreboard_cnt ? __iip_tcp_sacked_bytes(c) : 0;
	if (c->opt_sack && s->opts.sack_cnt) {
		uint8_t i;
		for (i = 0; i < s->opts.sack_cnt; i++)
			__iip_tcp_scoreboard_add(c, s->opts.sack[i].start, s->opts.sack[i].end);
	}
	if (__iip_seq_gt(s->ack, c->snd_una)) {
		__iip_tcp_window_update(ws, c, s);
		if (__iip_tcp_ack_advance(ws, c, s->ack, s, opaque))
			return 1;
		__iip_tcp_schedule_output(ws, c, opaque);
		return 0;
	}
	__iip_tcp_window_update(ws, c, s);
	/* RFC 5681 2 (duplicate ACK) and RFC 6675 5 (SACK loss detection) */
	if (c->opt_sack)
		/*
		 * RFC 6675 2 (DupAck): an ACK that SACKs new data, "even if it
		 * carries new data, changes the advertised window": a peer that
		 * sends too reports our losses on its data segments.  A D-SACK
		 * (RFC 2883) reports nothing new.
		 */
		is_dup = s->opts.sack_cnt && s->ack == c->snd_una && !(s->flags & IIP_TCP_FLAG_SYN)
			&& c->snd_max != c->snd_una && c->snd_wnd && __iip_tcp_sacked_bytes(c) > sacked_before;
	else /* RFC 5681 2 */
		is_dup = s->ack == c->snd_una && !s->payload_len && !(s->flags & (IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_FIN))
			&& c->snd_wnd == old_wnd && c->snd_max != c->snd_una
			&& c->snd_wnd; /* answers to zero-window probes are not loss signals */
	if (is_dup) {
		if (c->dupacks < 255)
			c->dupacks++;
		if (!c->in_recovery) {
			uint8_t lost = c->dupacks >= 3
				|| (c->opt_sack && __iip_tcp_sacked_bytes(c) > 3U * c->snd_mss);
			/* RFC 6582 3.2 step 1: no new recovery while the duplicate ACKs
			 * are for data sent before the previous recovery began */
			if (lost && __iip_seq_ge(c->snd_una, c->recover))
				__iip_tcp_enter_recovery(ws, c, opaque);
		} else if (!c->opt_sack)
			c->cwnd += c->snd_mss; /* RFC 5681 3.2 step 4: inflate */
		__iip_tcp_schedule_output(ws, c, opaque); /* limited transmit, recovery sends */
	} else if (c->snd_wnd != old_wnd)
		__iip_tcp_schedule_output(ws, c, opaque);
	return 0;
}

/*
 * The peer's SYN: its initial sequence number and the options it offered.
 * Window scaling, timestamps and SACK are used only when both ends sent
 * them (RFC 7323 1.3, RFC 2018 2); the MSS is clamped by the path MTU
 * (RFC 6691) and the timestamp option's 12 bytes.
 */
static void __iip_tcp_syn_in(struct iip_workspace *ws, struct iip_tcp_conn *c, struct iip_tcp_seg *s)
{
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	c->opt_ts = s->opts.has_ts;
	c->opt_sack = s->opts.has_sack_perm;
	c->opt_wscale = s->opts.has_wscale;
	if (!c->opt_wscale)
		c->rcv_wscale = 0;
	c->snd_wscale = c->opt_wscale ? s->opts.wscale : 0;
	if (s->opts.has_mss)
		c->peer_mss = s->opts.mss;
	if (c->opt_ts) {
		c->ts_recent = s->opts.ts_val;
		c->ts_recent_age_ms = ws->now_ms;
	}
	__iip_tcp_set_snd_mss(c);
	__iip_tcp_cc_init(c);
}

/* Our SYN was acknowledged: the connection is established (RFC 9293 3.5). */
static void __iip_tcp_handshake_done(struct iip_workspace *ws, struct iip_tcp_conn *c, struct iip_tcp_seg *s, uint32_t snd_wnd)
{
	c->snd_una = s->ack;
	c->snd_wnd = snd_wnd;
	c->max_snd_wnd = snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	if (c->opt_ts && s->opts.has_ts && s->opts.ts_ecr)
		__iip_tcp_rtt_sample(c, __iip_tcp_ts_now(ws, c) - s->opts.ts_ecr);
	else if (c->rtt_timing)
		__iip_tcp_rtt_sample(c, ws->now_ms - c->rtt_start_ms);
	else if (c->retries && !c->srtt8)
		/* RFC 6298 5.7: the SYN or SYN-ACK timed out and no sample
		 * exists: the RTO is re-initialised to 3 s for the data */
		c->rto_ms = __iip_max(3000U, (uint32_t) IIP_CONF_TCP_RTO_MIN_MS);
	c->rtt_timing = 0;
	c->retries = 0;
	c->backoff = 0;
	__iip_tcp_timer_off(c, IIP_TCP_TIMER_RTX);
	c->state = IIP_TCP_STATE_ESTABLISHED;
	IIP_STATS_INC(ws, tcp_conn_opened);
	c->app_notified = 1;
}

/* RFC 9293 3.10.7.3: SEGMENT ARRIVES in SYN-SENT. */
static void __iip_tcp_syn_sent_input(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, struct iip_tcp_seg *s, void *opaque)
{
	uint8_t ack_ok = 0;
	if (s->flags & IIP_TCP_FLAG_ACK) {
		if (__iip_seq_le(s->ack, c->iss) || __iip_seq_gt(s->ack, c->snd_max)) {
			if (!(s->flags & IIP_TCP_FLAG_RST)) {
				__iip_tcp_xmit(ws, c, s->ack, 0, IIP_TCP_FLAG_RST, opaque);
				IIP_STATS_INC(ws, tx_tcp_rst);
			}
			goto drop;
		}
		ack_ok = 1;
	}
	if (s->flags & IIP_TCP_FLAG_RST) {
		if (ack_ok) {
			/* connection refused */
			IIP_STATS_INC(ws, rx_tcp_rst);
			IIP_STATS_INC(ws, tcp_conn_reset);
			iip_ops_pkt_free(pkt, opaque);
			__iip_tcp_conn_release(ws, c, opaque);
			return;
		}
		goto drop;
	}
	if (!(s->flags & IIP_TCP_FLAG_SYN))
		goto drop;
	__iip_tcp_syn_in(ws, c, s);
	if (ack_ok) {
		/* SYN-ACK: established (the window of a SYN is not scaled) */
		__iip_tcp_handshake_done(ws, c, s, s->win);
		c->ack_now = 1;
		__iip_tcp_schedule_output(ws, c, opaque);
		c->app_opaque = iip_ops_tcp_connected(ws, c, pkt, opaque);
	} else {
		/* simultaneous open (RFC 9293 3.5, figure 8) */
		c->state = IIP_TCP_STATE_SYN_RECEIVED;
		ws->syn_received_cnt++;
		c->snd_wnd = s->win;
		__iip_tcp_xmit(ws, c, c->iss, 0, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK, opaque);
	}
drop:
	iip_ops_pkt_free(pkt, opaque);
}

/* Synchronized states and SYN-RECEIVED: RFC 9293 3.10.7.4. */
static void __iip_tcp_sync_input(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, struct iip_tcp_seg *s, void *opaque)
{
	uint32_t rcv_wnd = __iip_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint8_t acceptable;
	/*
	 * SYN-RECEIVED and the peer's SYN again (its sequence number lies just
	 * below RCV.NXT, so the window check would only ACK it): a retransmitted
	 * SYN means our SYN-ACK was lost, so it is sent again; a SYN,ACK that
	 * acknowledges our SYN is the other half of a simultaneous open (RFC
	 * 9293 3.5 fig. 8, line 6) and is processed as its ACK.
	 */
	if (c->state == IIP_TCP_STATE_SYN_RECEIVED && (s->flags & (IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_RST)) == IIP_TCP_FLAG_SYN
			&& s->seq == c->irs) {
		if (!(s->flags & IIP_TCP_FLAG_ACK) || s->ack != c->snd_max) {
			__iip_tcp_xmit(ws, c, c->iss, 0, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK, opaque);
			goto drop;
		}
		s->flags &= (uint8_t) ~IIP_TCP_FLAG_SYN;
		s->seq++;
		s->seg_len--;
	}
	/* PAWS (RFC 7323 5.3): old timestamps mark old duplicates */
	if (c->opt_ts && s->opts.has_ts && !(s->flags & IIP_TCP_FLAG_RST)
			&& __iip_seq_lt(s->opts.ts_val, c->ts_recent)
			&& ws->now_ms - c->ts_recent_age_ms < 24U * 24 * 3600 * 1000) {
		IIP_STATS_INC(ws, rx_tcp_paws);
		c->ack_now = 1;
		__iip_tcp_schedule_output(ws, c, opaque);
		goto drop;
	}
	/* first: sequence number acceptability */
	if (!s->seg_len)
		acceptable = rcv_wnd ? (__iip_seq_ge(s->seq, c->rcv_nxt) && __iip_seq_lt(s->seq, c->rcv_nxt + rcv_wnd)) : s->seq == c->rcv_nxt;
	else
		acceptable = rcv_wnd && __iip_seq_lt(s->seq, c->rcv_nxt + rcv_wnd) && __iip_seq_gt(s->seq + s->seg_len, c->rcv_nxt);
	if (!acceptable) {
		if (s->flags & IIP_TCP_FLAG_RST) {
			IIP_STATS_INC(ws, rx_tcp_rst_ignored);
			goto drop;
		}
		IIP_STATS_INC(ws, rx_tcp_bad_seq);
		c->ack_now = 1;
		__iip_tcp_schedule_output(ws, c, opaque);
		/* RFC 9293 3.10.7.4: in TIME-WAIT, the peer's retransmitted FIN
		 * (it ends at RCV.NXT) is acknowledged and restarts the 2 MSL wait */
		if (c->state == IIP_TCP_STATE_TIME_WAIT && (s->flags & IIP_TCP_FLAG_FIN) && s->seq + s->seg_len == c->rcv_nxt)
			__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_CLOSE, &c->t_close, 2 * IIP_CONF_TCP_MSL_MS);
		/* a zero window still takes valid ACKs (RFC 9293 3.10.7.4) */
		if (!(rcv_wnd == 0 && s->seq == c->rcv_nxt && (s->flags & IIP_TCP_FLAG_ACK)
				&& c->state != IIP_TCP_STATE_SYN_RECEIVED))
			goto drop;
		__iip_tcp_ack_in(ws, c, s, opaque);
		goto drop;
	}
	/* RFC 7323 4.3: remember the timestamp to echo */
	if (c->opt_ts && s->opts.has_ts && __iip_seq_le(s->seq, c->last_ack_sent) && __iip_seq_ge(s->opts.ts_val, c->ts_recent)) {
		c->ts_recent = s->opts.ts_val;
		c->ts_recent_age_ms = ws->now_ms;
	}
	/* second: RST (RFC 5961 3.2) */
	if (s->flags & IIP_TCP_FLAG_RST) {
		if (s->seq == c->rcv_nxt) {
			IIP_STATS_INC(ws, rx_tcp_rst);
			/*
			 * In TIME-WAIT the connection already ended normally (the
			 * application was told); a RST there, typically the peer's
			 * answer to a duplicate of our last ACK after it closed,
			 * only cuts the wait short (RFC 9293 3.10.7.4; RFC 1337).
			 */
			if (c->state != IIP_TCP_STATE_TIME_WAIT)
				IIP_STATS_INC(ws, tcp_conn_reset);
			iip_ops_pkt_free(pkt, opaque);
			__iip_tcp_conn_release(ws, c, opaque);
			return;
		}
		__iip_tcp_challenge_ack(ws, c, opaque);
		goto drop;
	}
	/* fourth: SYN in a synchronized state (RFC 5961 4.2) */
	if (s->flags & IIP_TCP_FLAG_SYN) {
		__iip_tcp_challenge_ack(ws, c, opaque);
		goto drop;
	}
	/* fifth: ACK */
	if (!(s->flags & IIP_TCP_FLAG_ACK))
		goto drop;
	if (c->state == IIP_TCP_STATE_SYN_RECEIVED) {
		if (__iip_seq_le(s->ack, c->snd_una) || __iip_seq_gt(s->ack, c->snd_max)) {
			__iip_tcp_xmit(ws, c, s->ack, 0, IIP_TCP_FLAG_RST, opaque);
			IIP_STATS_INC(ws, tx_tcp_rst);
			goto drop;
		}
		if (ws->syn_received_cnt)
			ws->syn_received_cnt--;
		__iip_tcp_handshake_done(ws, c, s, (uint32_t) s->win << c->snd_wscale);
		if (c->active_open)
			c->app_opaque = iip_ops_tcp_connected(ws, c, pkt, opaque);
		else
			c->app_opaque = iip_ops_tcp_accepted(ws, c, pkt, opaque);
		/* the application may have closed from the callback: FIN-WAIT-1
		 * still takes the text (and FIN) of this segment below */
	} else if (__iip_tcp_ack_in(ws, c, s, opaque)) {
		if (c->state == IIP_TCP_STATE_CLOSED)
			goto drop_gone;
		goto drop;
	}
	if (c->state == IIP_TCP_STATE_CLOSED)
		goto drop_gone;
	/* seventh and eighth: text and FIN */
	switch (c->state) {
	case IIP_TCP_STATE_ESTABLISHED:
	case IIP_TCP_STATE_FIN_WAIT_1:
	case IIP_TCP_STATE_FIN_WAIT_2:
		if (s->payload_len || (s->flags & IIP_TCP_FLAG_FIN)) {
			c->last_rx_ms = ws->now_ms;
			/*
			 * Our close is a half-close: the peer may go on sending
			 * (RFC 9293 3.6 puts no limit on FIN-WAIT-2); the time
			 * limit is for a peer that fell silent, so data restarts it.
			 */
			if (c->state == IIP_TCP_STATE_FIN_WAIT_2)
				__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_CLOSE, &c->t_close, IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS);
			__iip_tcp_data_in(ws, c, pkt, s, opaque);
			__iip_tcp_schedule_output(ws, c, opaque);
			return;
		}
		break;
	case IIP_TCP_STATE_TIME_WAIT:
		/* RFC 9293 3.10.7.4: a retransmitted FIN restarts the 2 MSL wait */
		if (s->flags & IIP_TCP_FLAG_FIN) {
			c->ack_now = 1;
			__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_CLOSE, &c->t_close, 2 * IIP_CONF_TCP_MSL_MS);
			__iip_tcp_schedule_output(ws, c, opaque);
		}
		break;
	default:
		/* CLOSE-WAIT, CLOSING, LAST-ACK: the peer already sent its FIN */
		if (s->flags & IIP_TCP_FLAG_FIN) {
			c->ack_now = 1;
			__iip_tcp_schedule_output(ws, c, opaque);
		}
		break;
	}
drop:
	c->last_rx_ms = ws->now_ms;
drop_gone:
	iip_ops_pkt_free(pkt, opaque);
}

/*
 * Header prediction (seed 004, after Van Jacobson): in ESTABLISHED, a segment
 * with only ACK (and PSH) set, at rcv_nxt, with no option but a fresh
 * timestamp, the window unchanged, nothing out of order and no recovery in
 * progress is a pure ACK advancing snd_una or the next in-order data.
 * Returns 1 if it handled the segment.
 */
static uint8_t __iip_tcp_fast_path(struct iip_workspace *ws, struct iip_tcp_conn *c, void *pkt, struct iip_tcp_seg *s, void *opaque)
{
	if (c->state != IIP_TCP_STATE_ESTABLISHED || (s->flags & ~IIP_TCP_FLAG_PSH) != IIP_TCP_FLAG_ACK
			|| s->seq != c->rcv_nxt || c->in_recovery || c->ooo.cnt || c->dupacks
			|| ((uint32_t) s->win << c->snd_wscale) != c->snd_wnd || s->opts.sack_cnt
			|| (c->opt_ts && (!s->opts.has_ts || __iip_seq_lt(s->opts.ts_val, c->ts_recent))))
		return 0;
	if (!s->payload_len) {
		if (!__iip_seq_gt(s->ack, c->snd_una) || __iip_seq_gt(s->ack, c->snd_max))
			return 0;
		if (c->opt_ts && __iip_seq_le(s->seq, c->last_ack_sent)) {
			c->ts_recent = s->opts.ts_val;
			c->ts_recent_age_ms = ws->now_ms;
		}
		IIP_STATS_INC(ws, rx_tcp_fast_path);
		c->last_rx_ms = ws->now_ms;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		__iip_tcp_ack_advance(ws, c, s->ack, s, opaque);
		__iip_tcp_schedule_output(ws, c, opaque);
		iip_ops_pkt_free(pkt, opaque);
		return 1;
	}
	/* in-order data, possibly acknowledging new data too (request/response) */
	if (c->fin_rcvd || __iip_seq_lt(s->ack, c->snd_una) || __iip_seq_gt(s->ack, c->snd_max)
			|| __iip_seq_gt(s->seq + s->payload_len, c->rcv_adv))
		return 0;
	if (s->ack != c->snd_una) {
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (__iip_tcp_ack_advance(ws, c, s->ack, s, opaque))
			return 0; /* cannot happen in ESTABLISHED; keeps the contract */
	}
	if (c->opt_ts && __iip_seq_le(s->seq, c->last_ack_sent)) {
		c->ts_recent = s->opts.ts_val;
		c->ts_recent_age_ms = ws->now_ms;
	}
	IIP_STATS_INC(ws, rx_tcp_fast_path);
	c->last_rx_ms = ws->now_ms;
	c->rcv_nxt += s->payload_len;
	__iip_tcp_ack_policy(c, s->payload_len);
	__iip_tcp_deliver(ws, c, pkt, 0, 0, opaque);
	__iip_tcp_schedule_output(ws, c, opaque);
	return 1;
}

static void __iip_tcp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque)
{
	void *pkt = rx->pkt;
	uint32_t l4_off = (uint32_t) rx->l3_off + rx->hdr_len;
	struct iip_tcp_seg s;
	struct iip_tcp_conn *c;
	uint16_t th_len;
	(void) ip4_be;
	IIP_STATS_INC(ws, rx_tcp);
	if (rx->l4_len < sizeof(struct iip_tcp_hdr) || iip_ops_pkt_get_len(pkt, opaque) < l4_off + sizeof(struct iip_tcp_hdr) || rx->bcast) {
		IIP_STATS_INC(ws, rx_tcp_malformed);
		goto drop;
	}
	s.th = (struct iip_tcp_hdr *) ((uint8_t *) rx->ip + rx->hdr_len);
	th_len = (uint16_t) (IIP_TCP_HDR_DOFF(s.th) * 4);
	if (th_len < sizeof(struct iip_tcp_hdr) || th_len > rx->l4_len || iip_ops_pkt_get_len(pkt, opaque) < l4_off + th_len) {
		IIP_STATS_INC(ws, rx_tcp_malformed);
		goto drop;
	}
	if (iip_ops_nic_feature_offload_tcp_rx_checksum(opaque) && !iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque)) {
		if (!iip_ops_nic_offload_tcp_rx_checksum(pkt, opaque)) {
			IIP_STATS_INC(ws, rx_tcp_bad_csum);
			goto drop;
		}
	} else if (!(iip_ops_nic_feature_offload_tcp_rx_checksum(opaque) && iip_ops_nic_offload_tcp_rx_checksum(pkt, opaque))) {
		uint8_t ok = 1;
		uint32_t sum = __iip_csum_pseudo(rx->ip->src_be, rx->ip->dst_be, IIP_IP4_PROTO_TCP, rx->l4_len);
		sum = __iip_csum_add(sum, __iip_pkt_csum(pkt, l4_off, rx->l4_len, &ok, opaque));
		if (!ok || __iip_csum_finish(sum) != 0) {
			IIP_STATS_INC(ws, rx_tcp_bad_csum);
			goto drop;
		}
	}
	s.flags = IIP_TCP_HDR_FLAGS(s.th);
	s.seq = __iip_ntohl(s.th->seq_be);
	s.ack = __iip_ntohl(s.th->ack_seq_be);
	s.win = __iip_ntohs(s.th->win_be);
	s.payload_len = rx->l4_len - th_len;
	s.seg_len = s.payload_len + ((s.flags & IIP_TCP_FLAG_SYN) ? 1 : 0) + ((s.flags & IIP_TCP_FLAG_FIN) ? 1 : 0);
	if (!__iip_tcp_opts_parse((const uint8_t *) (s.th + 1), (uint16_t) (th_len - sizeof(struct iip_tcp_hdr)),
				  (s.flags & IIP_TCP_FLAG_SYN) != 0, &s.opts)) {
		IIP_STATS_INC(ws, rx_tcp_bad_options);
		goto drop;
	}
	c = __iip_tcp_lookup(ws, rx->ip->dst_be, s.th->dst_be, rx->ip->src_be, s.th->src_be);
	if (c && c->state == IIP_TCP_STATE_TIME_WAIT && (s.flags & (IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_RST)) == IIP_TCP_FLAG_SYN
			&& __iip_seq_gt(s.seq, c->rcv_nxt)) {
		/* RFC 9293 3.10.7.4 / RFC 6191: a new incarnation may reuse a TIME-WAIT pair */
		__iip_tcp_conn_release(ws, c, opaque);
		c = NULL;
	}
	if (!c) {
		__iip_tcp_listen_input(ws, mac, rx, &s, opaque);
		return;
	}
	if (c->state == IIP_TCP_STATE_SYN_SENT) {
		__iip_tcp_syn_sent_input(ws, c, pkt, &s, opaque);
		return;
	}
	if (__iip_tcp_fast_path(ws, c, pkt, &s, opaque))
		return;
	__iip_tcp_sync_input(ws, c, pkt, &s, opaque);
	return;
drop:
	iip_ops_pkt_free(pkt, opaque);
}
