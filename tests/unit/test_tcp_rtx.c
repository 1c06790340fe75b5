/* Retransmission timer: RFC 6298 (RTO computation, backoff, Karn), RFC 1122 4.2.3.5 (R2: give up). */
#include "tcp_helpers.h"

static struct iip_workspace *WS(struct th_host *h) { return (struct iip_workspace *) h->ws; }

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

static uint32_t rto_of(struct tp *t)
{
	struct iip_tcp_info i;
	iip_tcp_get_info(t->h->ws, t->c, &i);
	return i.rto_ms;
}

/* Active open whose SYN-ACK arrives rtt_ms after the SYN (one RTT sample, RFC 6298 2.2). */
static void open_with_rtt(struct th_host *h, struct tp *t, uint32_t rtt_ms)
{
	struct th_seg s;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	uint8_t o[4] = { 2, 4, 0x05, 0xb4 };
	th_host_init(h);
	th_advance_ms(h, 1);
	tp_init(t, h);
	CHECK_EQ(iip_tcp_connect(h->ws, h->mac, h->ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h->opaque), 0);
	CHECK(tp_pop(t));
	t->iss = t->p.seq;
	t->rcv = t->iss + 1;
	th_advance_ms(h, rtt_ms);
	s = tp_seg_at(t, t->irs, SYN | ACK, NULL, 0);
	s.opts = o;
	s.opts_len = 4;
	th_send_seg(h, &s);
	t->snd = t->irs + 1;
	t->c = h->handle;
	EXPECT_SEG(t, ACK, t->iss + 1, t->irs + 1);
	iip_tcp_set_nodelay(h->ws, t->c, 1);
}

/* RFC 6298 2.2: first sample R: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4 RTTVAR); the timer fires then */
TEST(rfc6298_2_2_first_sample)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 100);
	CHECK_EQ(rto_of(&t), 300);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	th_advance_ms(&h, 299);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	CHECK_EQ(t.p.payload_len, 100);
	CHECK(pat_check(t.p.payload, 0, 100));
	CHECK_EQ(th_stats(&h).tx_tcp_rto, 1);
	done(&h, &t);
}

/* RFC 6298 2.3: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|, SRTT = 7/8 SRTT + 1/8 R' */
TEST(rfc6298_2_3_subsequent_sample)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 100);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK(tp_pop(&t));
	th_advance_ms(&h, 200);
	t.rcv = t.iss + 101;
	tp_send(&t, ACK, NULL, 0);
	/* RTTVAR = 37.5 + 25 = 62.5, SRTT = 112.5: RTO = 112 + 250 (1 ms granularity, truncated) */
	CHECK_EQ(rto_of(&t), 362);
	done(&h, &t);
}

/* RFC 6298 2.4 (as configured): the RTO never goes below IIP_CONF_TCP_RTO_MIN_MS */
TEST(rfc6298_2_4_rto_min_clamp)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 1);
	CHECK_EQ(rto_of(&t), IIP_CONF_TCP_RTO_MIN_MS);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	CHECK(tp_pop(&t));
	th_advance_ms(&h, IIP_CONF_TCP_RTO_MIN_MS - 1);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	done(&h, &t);
}

/* RFC 6298 5.5/5.6: the RTO doubles on each expiry (up to the max); RFC 1122 4.2.3.5: after R2
 * retransmissions the connection is aborted (RST sent, iip_ops_tcp_closed called) */
TEST(rfc6298_5_5_backoff_and_abort)
{
	struct th_host h;
	struct tp t;
	uint32_t rto = 300, i;
	open_with_rtt(&h, &t, 100);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK(tp_pop(&t));
	for (i = 0; i < IIP_CONF_TCP_RETRIES_MAX; i++) {
		th_advance_ms(&h, rto - 1);
		EXPECT_NONE(&t);
		th_advance_ms(&h, 1);
		EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
		CHECK_EQ(t.p.payload_len, 100);
		rto = rto * 2 > IIP_CONF_TCP_RTO_MAX_MS ? IIP_CONF_TCP_RTO_MAX_MS : rto * 2;
	}
	CHECK_EQ(h.n_closed, 0);
	th_advance_ms(&h, rto);
	CHECK_EQ(h.n_closed, 1);
	CHECK(h.closed_opaque == (void *) &h);
	CHECK(tp_pop(&t));
	CHECK(t.p.flags & RST);
	CHECK_EQ(th_stats(&h).tcp_conn_timed_out, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* Karn (RFC 6298 3): no RTT sample from a retransmitted segment; the backed-off RTO stays until a new sample */
TEST(rfc6298_3_karn)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 100);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK(tp_pop(&t));
	th_advance_ms(&h, 300);
	CHECK(tp_pop(&t)); /* retransmission */
	CHECK_EQ(rto_of(&t), 600);
	th_advance_ms(&h, 10);
	t.rcv = t.iss + 101;
	tp_send(&t, ACK, NULL, 0); /* ambiguous: 310 ms or 10 ms */
	CHECK_EQ(rto_of(&t), 600);
	/* new data: timed, and its sample sets the RTO from SRTT 100 / RTTVAR 50 */
	CHECK_EQ(th_app_send_pat(&h, t.c, 100, 100), 0);
	CHECK(tp_pop(&t));
	th_advance_ms(&h, 100);
	t.rcv = t.iss + 201;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(rto_of(&t), 100 + 150);
	done(&h, &t);
}

/* RFC 6298 5.3: an ACK of new data restarts the timer (RTO from now); 5.2: all acked -> timer off */
TEST(rfc6298_5_3_timer_restart_on_ack)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 100);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 100, 100), 0);
	CHECK(tp_pop(&t));
	CHECK(tp_pop(&t));
	th_advance_ms(&h, 200);
	t.rcv = t.iss + 101;
	tp_send(&t, ACK, NULL, 0);
	{
		uint32_t rto = rto_of(&t);
		th_advance_ms(&h, rto - 1);
		EXPECT_NONE(&t);
		th_advance_ms(&h, 1);
		EXPECT_SEG(&t, ACK | PSH, t.iss + 101, 1001);
	}
	t.rcv = t.iss + 201;
	tp_send(&t, ACK, NULL, 0);
	th_advance_ms(&h, 100000);
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_closed, 0);
	done(&h, &t);
}

/* RFC 5681 3.1 / RFC 6298 5.5: after an RTO, one segment (loss window), ssthresh = max(FlightSize/2, 2 SMSS);
 * the go-back-N resend grows with slow start */
TEST(rfc5681_3_1_rto_loss_window)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	struct iip_tcp_info info;
	open_with_rtt(&h, &t, 100);
	for (i = 0; i < 10; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * 1460, 1460), 0);
	for (i = 0; i < 10; i++)
		EXPECT_SEG(&t, ACK | PSH, t.iss + 1 + i * 1460, 1001);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 300);
	EXPECT_DATA(&t, t.iss + 1, 1001, 1460);
	EXPECT_NONE(&t);
	iip_tcp_get_info(h.ws, t.c, &info);
	CHECK_EQ(info.cwnd, 1460);
	CHECK_EQ(info.ssthresh, 5 * 1460);
	t.rcv = t.iss + 1 + 1460;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1 + 1460, 1001, 1460);
	EXPECT_DATA(&t, t.iss + 1 + 2 * 1460, 1001, 1460);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 6298 5.7: when the SYN (or SYN-ACK) timed out and no RTT sample exists, the RTO is 3 s once data flows */
TEST(rfc6298_5_7_rto_3s_after_syn_timeout)
{
	struct th_host h;
	struct tp t;
	struct th_seg s;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	uint8_t o[4] = { 2, 4, 0x05, 0xb4 };
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 1;
	th_advance_ms(&h, 1000);
	CHECK(tp_pop(&t)); /* the SYN again */
	th_advance_ms(&h, 10);
	s = tp_seg_at(&t, t.irs, SYN | ACK, NULL, 0);
	s.opts = o;
	s.opts_len = 4;
	th_send_seg(&h, &s);
	t.c = h.handle;
	CHECK(t.c != NULL);
	if (t.c)
		CHECK_EQ(rto_of(&t), 3000);
	tp_drain(&t);
	done(&h, &t);

	/* passive side: the SYN-ACK retransmitted */
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	th_advance_ms(&h, 1000);
	CHECK(tp_pop(&t));
	t.rcv = t.iss + 1;
	tp_send_at(&t, 1001, ACK, NULL, 0);
	t.c = h.handle;
	CHECK(t.c != NULL);
	if (t.c)
		CHECK_EQ(rto_of(&t), 3000);
	done(&h, &t);
}

/* iip_run asks to be called again no later than the earliest timer (RTO, delayed ACK, keepalive); waking up
 * early is allowed (a timer turned off leaves a stale lower bound), late is not */
TEST(api_next_us_follows_timers)
{
	struct th_host h;
	struct tp t;
	open_with_rtt(&h, &t, 100); /* RTO 300 ms */
	th_advance_ms(&h, 0);
	CHECK(h.next_us <= IIP_CONF_IDLE_NEXT_US);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	tp_drain(&t);
	th_advance_ms(&h, 100);
	CHECK(h.next_us <= 200 * 1000);
	tp_send_pat(&t, t.irs + 1, 10, ACK); /* acknowledges nothing new: delayed ACK armed */
	CHECK(h.next_us <= IIP_CONF_TCP_DELAYED_ACK_MS * 1000);
	th_advance_ms(&h, IIP_CONF_TCP_DELAYED_ACK_MS);
	tp_drain(&t);
	CHECK(h.next_us <= (200 - IIP_CONF_TCP_DELAYED_ACK_MS) * 1000);
	t.rcv = t.iss + 11;
	tp_send(&t, ACK, NULL, 0);
	iip_tcp_set_keepalive(h.ws, t.c, 1, 500, 100, 2);
	th_advance_ms(&h, 0);
	CHECK(h.next_us <= 500 * 1000);
	/* following next_us step by step reaches the keepalive probe exactly when due */
	{
		uint32_t waited = 0, guard = 0;
		while (!th_out_count(&h) && guard++ < 100) {
			uint32_t ms = h.next_us / 1000;
			CHECK(ms > 0 || h.next_us > 0);
			waited += ms;
			th_advance_ms(&h, ms);
		}
		CHECK_EQ(waited, 500);
		CHECK(tp_pop(&t));
		CHECK_EQ(t.p.seq, t.iss + 10);
	}
	done(&h, &t);
}

int main(void)
{
	RUN(rfc6298_2_2_first_sample);
	RUN(rfc6298_2_3_subsequent_sample);
	RUN(rfc6298_2_4_rto_min_clamp);
	RUN(rfc6298_5_5_backoff_and_abort);
	RUN(rfc6298_3_karn);
	RUN(rfc6298_5_3_timer_restart_on_ack);
	RUN(rfc5681_3_1_rto_loss_window);
	RUN(rfc6298_5_7_rto_3s_after_syn_timeout);
	RUN(api_next_us_follows_timers);
	TH_SUMMARY();
}
