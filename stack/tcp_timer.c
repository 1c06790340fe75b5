/*
 * tcp_timer.c: the connection timers, walked once when the earliest deadline
 * (ws->timer_next_ms, kept as a lower bound) has passed: retransmission
 * (RFC 6298 5.4-5.7) with SYN and SYN-ACK retries, the persist timer with
 * zero-window probes (RFC 9293 3.8.6.1), delayed ACKs, keepalive (RFC 1122
 * 4.2.3.6), and the end of TIME-WAIT and FIN-WAIT-2.
 */

static uint8_t __iip_tcp_timer_due(struct iip_workspace *ws, struct iip_tcp_conn *c, uint8_t which, uint32_t at)
{
	if (!(c->timers_on & which) || __iip_seq_lt(ws->now_ms, at))
		return 0;
	__iip_tcp_timer_off(c, which);
	return 1;
}

/* Gives up on a connection that stopped answering (RFC 1122 4.2.3.5, R2). */
static void __iip_tcp_abort_timeout(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	IIP_STATS_INC(ws, tcp_conn_timed_out);
	if (c->state >= IIP_TCP_STATE_ESTABLISHED) {
		/* tell the peer, as RFC 9293 3.10.5 ABORT does */
		__iip_tcp_xmit(ws, c, c->snd_nxt, 0, IIP_TCP_FLAG_RST, opaque);
		IIP_STATS_INC(ws, tx_tcp_rst);
	}
	__iip_tcp_conn_release(ws, c, opaque);
}

/* Returns 1 if the connection is gone. */
static uint8_t __iip_tcp_on_rtx_timer(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	switch (c->state) {
	case IIP_TCP_STATE_SYN_SENT:
	case IIP_TCP_STATE_SYN_RECEIVED:
		if (++c->retries > IIP_CONF_TCP_SYN_RETRIES_MAX) {
			__iip_tcp_abort_timeout(ws, c, opaque);
			return 1;
		}
		c->rtt_timing = 0;
		c->rto_ms = __iip_min(c->rto_ms * 2, (uint32_t) IIP_CONF_TCP_RTO_MAX_MS);
		__iip_tcp_xmit(ws, c, c->iss, 0, (uint8_t) (IIP_TCP_FLAG_SYN | (c->state == IIP_TCP_STATE_SYN_RECEIVED ? IIP_TCP_FLAG_ACK : 0)), opaque);
		IIP_STATS_INC(ws, tx_tcp_retrans);
		__iip_tcp_rtx_arm(ws, c);
		return 0;
	case IIP_TCP_STATE_CLOSED:
	case IIP_TCP_STATE_TIME_WAIT:
		return 0;
	default:
		break;
	}
	if (!c->snd_wnd && __iip_seq_lt(c->snd_una, c->snd_queued)) {
		/*
		 * persist (RFC 9293 3.8.6.1): the peer's window is zero, whether
		 * or not data was in flight when it closed: one byte at SND.UNA
		 * (snd_nxt stays put, snd_max covers the byte in case the peer
		 * takes it), so the peer answers with its window even if its
		 * window update was lost; never give up while the peer answers
		 * (RFC 1122 4.2.2.17)
		 */
		__iip_tcp_xmit(ws, c, c->snd_una, 1, IIP_TCP_FLAG_ACK, opaque);
		if (__iip_seq_lt(c->snd_max, c->snd_una + 1))
			c->snd_max = c->snd_una + 1;
		IIP_STATS_INC(ws, tx_tcp_zwp);
		c->zwp_probing = 1;
		c->backoff = (uint8_t) __iip_min(c->backoff + 1, 16);
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_RTX, &c->t_rtx,
				    __iip_min(c->rto_ms << __iip_min(c->backoff, 6), (uint32_t) IIP_CONF_TCP_RTO_MAX_MS));
		return 0;
	}
	if (c->snd_una == c->snd_max) {
		/* nothing in flight: armed because a send failed for lack of a packet */
		if (__iip_seq_lt(c->snd_nxt, c->snd_queued) || (c->fin_queued && c->snd_nxt == c->fin_seq))
			__iip_tcp_schedule_output(ws, c, opaque);
		return 0;
	}
	if (++c->retries > IIP_CONF_TCP_RETRIES_MAX) {
		__iip_tcp_abort_timeout(ws, c, opaque);
		return 1;
	}
	__iip_tcp_on_rto(ws, c);
	__iip_tcp_schedule_output(ws, c, opaque);
	return 0;
}

static uint8_t __iip_tcp_on_keepalive_timer(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	uint32_t idle = ws->now_ms - c->last_rx_ms;
	if (!c->keepalive_on || c->state != IIP_TCP_STATE_ESTABLISHED)
		return 0;
	if (idle < c->keepalive_idle_ms) {
		c->keepalive_probes_sent = 0;
		__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_KEEPALIVE, &c->t_keepalive, c->keepalive_idle_ms - idle);
		return 0;
	}
	if (c->keepalive_probes_sent >= c->keepalive_probes) {
		__iip_tcp_abort_timeout(ws, c, opaque);
		return 1;
	}
	/* RFC 1122 4.2.3.6: SEG.SEQ = SND.NXT - 1, no data: the peer must ACK it */
	__iip_tcp_xmit(ws, c, c->snd_una - 1, 0, IIP_TCP_FLAG_ACK, opaque);
	IIP_STATS_INC(ws, tx_tcp_keepalive);
	c->keepalive_probes_sent++;
	__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_KEEPALIVE, &c->t_keepalive, c->keepalive_intvl_ms);
	return 0;
}

static void __iip_tcp_timers(struct iip_workspace *ws, void *opaque)
{
	struct iip_tcp_conn *c, *next;
	uint32_t earliest = ws->now_ms + IIP_CONF_IDLE_NEXT_US / 1000;
	if (__iip_seq_lt(ws->now_ms, ws->timer_next_ms))
		return;
	ws->timer_next_ms = earliest; /* timers armed below lower it again */
	for (c = ws->conn_all; c; c = next) {
		next = c->all_next;
		if (!c->timers_on)
			continue;
		if (__iip_tcp_timer_due(ws, c, IIP_TCP_TIMER_CLOSE, c->t_close)) {
			if (c->state == IIP_TCP_STATE_FIN_WAIT_2)
				IIP_STATS_INC(ws, tcp_conn_timed_out);
			__iip_tcp_conn_release(ws, c, opaque);
			continue;
		}
		if (__iip_tcp_timer_due(ws, c, IIP_TCP_TIMER_RTX, c->t_rtx) && __iip_tcp_on_rtx_timer(ws, c, opaque))
			continue;
		if (__iip_tcp_timer_due(ws, c, IIP_TCP_TIMER_KEEPALIVE, c->t_keepalive) && __iip_tcp_on_keepalive_timer(ws, c, opaque))
			continue;
		if (__iip_tcp_timer_due(ws, c, IIP_TCP_TIMER_DELACK, c->t_delack)) {
			c->ack_now = 1;
			__iip_tcp_schedule_output(ws, c, opaque);
		}
		/* the earliest deadline still armed on this connection */
		if ((c->timers_on & IIP_TCP_TIMER_RTX) && __iip_seq_lt(c->t_rtx, earliest))
			earliest = c->t_rtx;
		if ((c->timers_on & IIP_TCP_TIMER_DELACK) && __iip_seq_lt(c->t_delack, earliest))
			earliest = c->t_delack;
		if ((c->timers_on & IIP_TCP_TIMER_KEEPALIVE) && __iip_seq_lt(c->t_keepalive, earliest))
			earliest = c->t_keepalive;
		if ((c->timers_on & IIP_TCP_TIMER_CLOSE) && __iip_seq_lt(c->t_close, earliest))
			earliest = c->t_close;
	}
	if (__iip_seq_lt(earliest, ws->timer_next_ms))
		ws->timer_next_ms = earliest;
}
