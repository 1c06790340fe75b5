/*
 * tcp_cc.c: round-trip time and retransmission timeout (RFC 6298), the
 * peer's SACK blocks (RFC 2018) kept as a scoreboard for loss recovery
 * (RFC 6675), and congestion control: NewReno (RFC 5681, RFC 6582) by
 * default, CUBIC (RFC 9438) per connection.
 */

/* RFC 6298 2.2 / 2.3, with the clock granularity G of 1 ms. */
static void __iip_tcp_rtt_sample(struct iip_tcp_conn *c, uint32_t r)
{
	uint32_t rto;
	if (!r)
		r = 1;
	if (!c->srtt8) {
		c->srtt8 = r << 3;
		c->rttvar4 = r << 1; /* R/2, scaled by 4 */
	} else {
		uint32_t srtt = c->srtt8 >> 3;
		uint32_t delta = srtt > r ? srtt - r : r - srtt;
		/* rttvar = 3/4 rttvar + 1/4 |srtt - r|; srtt = 7/8 srtt + 1/8 r */
		c->rttvar4 = c->rttvar4 - (c->rttvar4 >> 2) + delta;
		c->srtt8 = c->srtt8 - (c->srtt8 >> 3) + r;
	}
	rto = (c->srtt8 >> 3) + __iip_max(1U, c->rttvar4);
	c->rto_ms = __iip_min(__iip_max(rto, (uint32_t) IIP_CONF_TCP_RTO_MIN_MS), (uint32_t) IIP_CONF_TCP_RTO_MAX_MS);
}

/* ----- SACK scoreboard ----- */

/* Records a SACK block, keeping the list sorted and merged; ignores blocks at or below snd_una (D-SACK, RFC 2883). */
static void __iip_tcp_scoreboard_add(struct iip_tcp_conn *c, uint32_t s, uint32_t e)
{
	uint8_t i, j;
	if (!__iip_seq_lt(s, e) || __iip_seq_le(e, c->snd_una) || __iip_seq_gt(e, c->snd_max))
		return;
	if (__iip_seq_lt(s, c->snd_una))
		s = c->snd_una;
	for (i = 0; i < c->scoreboard_cnt; i++) {
		struct iip_seq_range *r = &c->scoreboard[i];
		if (__iip_seq_le(s, r->end) && __iip_seq_ge(e, r->start)) {
			/* overlaps or touches: merge, then absorb the following ranges */
			if (__iip_seq_lt(s, r->start))
				r->start = s;
			if (__iip_seq_gt(e, r->end))
				r->end = e;
			while (i + 1 < c->scoreboard_cnt && __iip_seq_le(c->scoreboard[i + 1].start, r->end)) {
				if (__iip_seq_gt(c->scoreboard[i + 1].end, r->end))
					r->end = c->scoreboard[i + 1].end;
				for (j = (uint8_t) (i + 1); j + 1 < c->scoreboard_cnt; j++)
					c->scoreboard[j] = c->scoreboard[j + 1];
				c->scoreboard_cnt--;
			}
			return;
		}
		if (__iip_seq_lt(e, r->start))
			break;
	}
	if (c->scoreboard_cnt == IIP_TCP_SCOREBOARD_MAX) {
		if (i == IIP_TCP_SCOREBOARD_MAX)
			return; /* the highest range is the least useful to keep */
		c->scoreboard_cnt--;
	}
	for (j = c->scoreboard_cnt; j > i; j--)
		c->scoreboard[j] = c->scoreboard[j - 1];
	c->scoreboard[i].start = s;
	c->scoreboard[i].end = e;
	c->scoreboard_cnt++;
}

/* Forgets what snd_una passed. */
static void __iip_tcp_scoreboard_prune(struct iip_tcp_conn *c)
{
	uint8_t k = 0, i;
	for (i = 0; i < c->scoreboard_cnt; i++) {
		struct iip_seq_range r = c->scoreboard[i];
		if (__iip_seq_le(r.end, c->snd_una))
			continue;
		if (__iip_seq_lt(r.start, c->snd_una))
			r.start = c->snd_una;
		c->scoreboard[k++] = r;
	}
	c->scoreboard_cnt = k;
}

static uint32_t __iip_tcp_sacked_bytes(struct iip_tcp_conn *c)
{
	uint32_t n = 0;
	uint8_t i;
	for (i = 0; i < c->scoreboard_cnt; i++)
		n += c->scoreboard[i].end - c->scoreboard[i].start;
	return n;
}

/*
 * The first hole at or after "from" that lies below the highest SACKed byte:
 * data the receiver lacks while it holds later data, i.e. lost (RFC 6675
 * NextSeg rule 1, with every hole below the highest SACK taken as lost).
 */
static uint8_t __iip_tcp_next_hole(struct iip_tcp_conn *c, uint32_t from, uint32_t *start, uint32_t *len)
{
	uint8_t i;
	uint32_t pos = from;
	for (i = 0; i < c->scoreboard_cnt; i++) {
		struct iip_seq_range *r = &c->scoreboard[i];
		if (__iip_seq_le(r->end, pos))
			continue;
		if (__iip_seq_lt(pos, r->start)) {
			*start = pos;
			*len = r->start - pos;
			return 1;
		}
		pos = r->end;
	}
	return 0;
}

/*
 * RFC 6675 SetPipe, by ranges: bytes in flight that are neither SACKed nor
 * lost, plus lost bytes already retransmitted.  Holes below the highest
 * SACKed byte and above HighRxt are lost and not yet resent.
 */
static uint32_t __iip_tcp_pipe(struct iip_tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una - __iip_tcp_sacked_bytes(c);
	uint32_t pos = __iip_seq_gt(c->high_rxt, c->snd_una) ? c->high_rxt : c->snd_una;
	uint32_t s, l;
	while (__iip_tcp_next_hole(c, pos, &s, &l)) {
		out -= __iip_min(out, l);
		pos = s + l;
	}
	return out;
}

/* ----- congestion control ----- */

static void __iip_tcp_cc_init(struct iip_tcp_conn *c)
{
	/* RFC 6928: IW = min(10 * MSS, max(2 * MSS, 14600)) */
	uint32_t iw = __iip_min((uint32_t) IIP_CONF_TCP_INIT_CWND_SEGS * c->snd_mss, __iip_max(2U * c->snd_mss, 14600U));
	c->cwnd = iw;
	c->ssthresh = 0x7fffffffU; /* RFC 5681 3.1: arbitrarily high */
}

/* RFC 9438 4.2 constants: C = 0.4, beta = 0.7; fixed point in 1/1024. */
#define __IIP_CUBIC_BETA_1024 (717)

/* w * f / 1024 without overflow for any window below 2^32 / f * 1024 and without
 * truncating w to a multiple of 1024 first */
static uint32_t __iip_mul_frac1024(uint32_t w, uint32_t f)
{
	return (w >> 10) * f + (((w & 1023U) * f) >> 10);
}

/* Cube root of n (integer), for K = cbrt(W_max * (1 - beta) / C). */
static uint32_t __iip_cbrt(uint32_t n)
{
	uint32_t x = 0, b;
	for (b = 1U << 10; b; b >>= 1) {
		uint32_t y = x | b;
		if (y <= 1625 && y * y * y <= n) /* 1625^3 fits in 32 bits */
			x = y;
	}
	return x;
}

/* cwnd growth on an ACK of "acked" new bytes outside recovery. */
static void __iip_tcp_cc_on_ack(struct iip_workspace *ws, struct iip_tcp_conn *c, uint32_t acked)
{
	if (c->cwnd < c->ssthresh) {
		/*
		 * Slow start by bytes acknowledged (RFC 3465), at most doubling per
		 * ACK.  RFC 5681 3.1 recommends at most one SMSS per ACK; stretch
		 * ACKs (LRO, one ACK per batch) would then slow the start to a
		 * crawl.  Counting every byte without a limit is worse: after a
		 * time-out one cumulative ACK covering a filled hole lifted cwnd
		 * from one segment to ssthresh at once, and the burst was lost
		 * again (found by tests/interop/transfer.sh through the impairment
		 * bridge).  Capping the increase at cwnd keeps the doubling per
		 * round trip slow start means, and gives RFC 3465's L = 1 SMSS
		 * right after a time-out.
		 */
		c->cwnd += __iip_min(acked, c->cwnd);
		if (c->cwnd > c->ssthresh)
			c->cwnd = c->ssthresh;
		return;
	}
	if (c->cc_algo == IIP_TCP_CC_CUBIC && c->cubic_w_max) {
		/* RFC 9438 4.2: W_cubic(t) = C (t - K)^3 + W_max, in segments */
		uint32_t mss = c->snd_mss, t, target;
		if (!c->cubic_epoch_ms) {
			c->cubic_epoch_ms = ws->now_ms ? ws->now_ms : 1;
			c->cubic_w_est = c->cwnd;
		}
		t = ws->now_ms - c->cubic_epoch_ms + (c->srtt8 >> 3);
		{
			/* C (t - K)^3 with t, K in ms: 0.4 * d^3 / 1e9 segments */
			uint32_t d = t > c->cubic_k_ms ? t - c->cubic_k_ms : c->cubic_k_ms - t;
			uint32_t dd = __iip_min(d, 100000U) / 10;	/* in 10 ms units */
			/* 0.4 * (d / 1000 s)^3 segments = 0.4 * dd^3 / 10^6 = (dd^2 / 1000) * dd / 2500;
			 * the grouping keeps every product below 2^32 (dd <= 10^4) */
			uint32_t cube = (dd * dd / 1000) * dd / 2500;
			uint32_t wmax_seg = c->cubic_w_max / mss;
			target = t > c->cubic_k_ms ? wmax_seg + cube : (wmax_seg > cube ? wmax_seg - cube : 1);
			target *= mss;
		}
		/* RFC 9438 4.3: never slower than Reno (the TCP-friendly estimate) */
		c->bytes_acked += acked;
		if (c->bytes_acked >= c->cwnd) {
			c->bytes_acked -= c->cwnd;
			c->cubic_w_est += mss;
		}
		if (target < c->cubic_w_est)
			target = c->cubic_w_est;
		if (target > c->cwnd) {
			/* at most 1.5x per RTT (RFC 9438 4.4): grow by (target - cwnd) / cwnd per ACK */
			uint32_t inc = (uint32_t) (((target - c->cwnd) / (c->cwnd / mss + 1)));
			c->cwnd += __iip_max(__iip_min(inc, acked), 1U);
		}
		return;
	}
	/* RFC 5681 3.1 congestion avoidance with byte counting */
	c->bytes_acked += acked;
	if (c->bytes_acked >= c->cwnd) {
		c->bytes_acked -= c->cwnd;
		c->cwnd += c->snd_mss;
	}
}

/* The multiplicative decrease on a loss event (fast retransmit or RTO). */
static void __iip_tcp_cc_on_loss(struct iip_workspace *ws, struct iip_tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;
	/* RFC 5681 3.2 step 2: segments sent by limited transmit (RFC 3042),
	 * i.e. beyond cwnd, do not count in FlightSize at the third dupack */
	if (c->dupacks >= 3 && !c->in_recovery && flight > c->cwnd)
		flight = c->cwnd;
	if (c->cc_algo == IIP_TCP_CC_CUBIC) {
		/* RFC 9438 4.6/4.7: remember W_max (with fast convergence), beta = 0.7 */
		uint32_t w = c->cwnd;
		if (c->cubic_w_max && w < c->cubic_w_max)
			c->cubic_w_max = __iip_mul_frac1024(w, (1024 + __IIP_CUBIC_BETA_1024) / 2);
		else
			c->cubic_w_max = w;
		c->ssthresh = __iip_max(__iip_mul_frac1024(w, __IIP_CUBIC_BETA_1024), 2U * c->snd_mss);
		{
			/* K = cbrt(W_max (1 - beta) / C) seconds; in segments, scaled to ms */
			uint32_t wmax_seg = c->cubic_w_max / c->snd_mss;
			uint32_t k3 = wmax_seg * 3 / 4; /* (1 - 0.7) / 0.4 = 0.75 */
			/* K in ms = cbrt(k3) * 1000; refine with 10x resolution */
			c->cubic_k_ms = __iip_cbrt(__iip_min(k3 * 1000U, 0xffffffffU / 1000U)) * 100;
		}
		c->cubic_epoch_ms = 0;
		(void) ws;
	} else
		/* RFC 5681 eqn. 4: ssthresh = max(FlightSize / 2, 2 * SMSS) */
		c->ssthresh = __iip_max(flight / 2, 2U * c->snd_mss);
	c->bytes_acked = 0;
}

/* Enters fast recovery (RFC 5681 3.2, RFC 6582 3.2, RFC 6675 5). */
static void __iip_tcp_enter_recovery(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	IIP_STATS_INC(ws, tx_tcp_fast_retrans);
	__iip_tcp_cc_on_loss(ws, c);
	c->in_recovery = 1;
	c->recover = c->snd_max;
	c->high_rxt = c->snd_una;
	if (c->opt_sack) {
		c->cwnd = c->ssthresh;
		/* RFC 6675 5 (4.1): retransmit the first unSACKed segment now */
		{
			uint32_t s, l;
			if (!__iip_tcp_next_hole(c, c->snd_una, &s, &l)) {
				s = c->snd_una;
				l = c->snd_mss;
			}
			__iip_tcp_retransmit(ws, c, s, __iip_min(l, c->snd_max - s), opaque);
			c->high_rxt = s + __iip_min(l, (uint32_t) __iip_tcp_mss_now(c));
		}
	} else {
		/* NewReno: retransmit, then inflate by the three segments that left */
		__iip_tcp_retransmit(ws, c, c->snd_una, __iip_min((uint32_t) c->snd_mss, c->snd_max - c->snd_una), opaque);
		c->cwnd = c->ssthresh + 3U * c->snd_mss;
	}
}

/* RTO expiry (RFC 6298 5.4-5.7, RFC 5681 3.1 eqn. 4 and loss window). */
static void __iip_tcp_on_rto(struct iip_workspace *ws, struct iip_tcp_conn *c)
{
	IIP_STATS_INC(ws, tx_tcp_rto);
	/* RFC 5681 eqn. 4 applies to the first timeout of a series only */
	if (!c->backoff)
		__iip_tcp_cc_on_loss(ws, c);
	c->cwnd = c->snd_mss; /* loss window: one segment */
	c->in_recovery = 0;
	c->dupacks = 0;
	c->recover = c->snd_max;
	/* RFC 2018 8: after a timeout, earlier SACK information is not trusted */
	c->scoreboard_cnt = 0;
	c->high_rxt = c->snd_una;
	c->snd_nxt = c->snd_una;
	c->rtt_timing = 0;
	c->backoff++;
	c->rto_ms = __iip_min(c->rto_ms * 2, (uint32_t) IIP_CONF_TCP_RTO_MAX_MS);
}
