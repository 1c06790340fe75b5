/* CUBIC (RFC 9438) per connection (iip_tcp_set_cc), and NewReno fast retransmit with an ISN in the upper half
 * of the sequence space (RFC 6582 "recover" initialised to the ISS). */
#include "tcp_helpers.h"

#define MSS 1460

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

static void open_and_queue(struct th_host *h, struct tp *t, uint32_t n, uint32_t skew_ms)
{
	struct tp_synopts so = tp_synopts_none();
	uint32_t i;
	th_host_init(h);
	if (skew_ms)
		th_advance_ms(h, skew_ms);
	tp_init(t, h);
	tp_passive_open(t, &so);
	iip_tcp_set_nodelay(h->ws, t->c, 1);
	for (i = 0; i < n; i++)
		CHECK_EQ(th_app_send_pat(h, t->c, i * MSS, MSS), 0);
	tp_drain(t);
}

/* RFC 9438 4.6: on a loss, ssthresh = cwnd * beta_cubic (0.7) */
TEST(rfc9438_4_6_multiplicative_decrease)
{
	struct th_host h;
	struct tp t;
	struct iip_tcp_info i;
	open_and_queue(&h, &t, 0, 0);
	iip_tcp_set_cc(h.ws, t.c, IIP_TCP_CC_CUBIC);
	{
		uint32_t k;
		for (k = 0; k < 10; k++)
			CHECK_EQ(th_app_send_pat(&h, t.c, k * MSS, MSS), 0);
	}
	tp_drain(&t);
	t.rcv = t.iss + 1;
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	iip_tcp_get_info(h.ws, t.c, &i);
	/* beta = 717/1024 = 0.7002 in the stack's fixed point */
	CHECK(i.ssthresh >= 10 * MSS * 7 / 10 && i.ssthresh <= 10 * MSS * 7 / 10 + 10 * MSS / 500);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.seq, t.iss + 1);
	done(&h, &t);
}

/* RFC 9438 4.2: W_cubic(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C), C = 0.4, in segments and
 * seconds.  Driven through the controller's functions on a connection object. */
TEST(rfc9438_4_2_window_function)
{
	struct th_host h;
	struct tp t;
	struct iip_workspace *ws;
	struct iip_tcp_conn *c;
	uint32_t before, w_max = 100 * 1000;
	open_and_queue(&h, &t, 0, 0);
	ws = (struct iip_workspace *) h.ws;
	c = tp_conn(&t);
	c->cc_algo = IIP_TCP_CC_CUBIC;
	c->snd_mss = 1000;
	c->cwnd = w_max;
	c->snd_max = c->snd_una + w_max;
	c->srtt8 = 0;
	__iip_tcp_cc_on_loss(ws, c);
	CHECK(c->ssthresh >= 70000 && c->ssthresh <= 70000 + 200);
	/* K = cbrt(100 * 0.3 / 0.4) = cbrt(75) = 4.217 s */
	CHECK(c->cubic_k_ms >= 4150 && c->cubic_k_ms <= 4250);
	c->snd_max = c->snd_una;
	c->cwnd = c->ssthresh;
	/* the epoch starts at the first ACK in congestion avoidance */
	__iip_tcp_cc_on_ack(ws, c, 1000);
	/* at t = K + 2 s: W = W_max + 0.4 * 8 = 103.2 segments; from cwnd = 103 segments, no growth due yet beyond
	 * the 0.2 segment left: an ACK adds at most (target - cwnd) / (cwnd / mss + 1) */
	ws->now_ms += c->cubic_k_ms + 2000;
	c->cwnd = 103 * 1000;
	before = c->cwnd;
	__iip_tcp_cc_on_ack(ws, c, 1000);
	CHECK(c->cwnd - before <= 200 / 104 + 1);
	/* at t = K + 10 s: W = 100 + 400 = 500 segments: growth toward it */
	ws->now_ms += 8000;
	c->cwnd = 200 * 1000;
	before = c->cwnd;
	__iip_tcp_cc_on_ack(ws, c, 1000);
	CHECK_EQ(c->cwnd - before, __iip_min((uint32_t) (500 - 200) * 1000 / 201, 1000U));
	/* at t = K + 100 s: W = 100 + 400000 segments, no overflow: the step is bounded by the ACKed bytes */
	ws->now_ms += 90000;
	before = c->cwnd;
	__iip_tcp_cc_on_ack(ws, c, 1000);
	CHECK_EQ(c->cwnd - before, 1000);
	c->snd_mss = 1460;
	done(&h, &t);
}

/* RFC 6582: fast retransmit works whatever the ISN (recover starts at the ISS, not 0) */
TEST(rfc6582_fast_retransmit_with_high_isn)
{
	struct th_host h;
	struct tp t;
	uint32_t k;
	open_and_queue(&h, &t, 0, 9000000); /* 2.5 hours later: the ISN moved by 2.25e9 */
	CHECK(t.iss >= 0x80000000U);
	for (k = 0; k < 10; k++)
		CHECK_EQ(th_app_send_pat(&h, t.c, k * MSS, MSS), 0);
	tp_drain(&t);
	t.rcv = t.iss + 1;
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_drain(&t); /* limited transmit */
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1, 1001, MSS);
	CHECK_EQ(th_stats(&h).tx_tcp_fast_retrans, 1);
	done(&h, &t);
}

int main(void)
{
	RUN(rfc9438_4_6_multiplicative_decrease);
	RUN(rfc9438_4_2_window_function);
	RUN(rfc6582_fast_retransmit_with_high_isn);
	TH_SUMMARY();
}
