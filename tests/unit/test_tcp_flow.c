/* Flow control: the receive window from unconsumed packets (iip_tcp_rxbuf_consumed), zero-window probing
 * (RFC 9293 3.8.6.1), silly window syndrome avoidance (RFC 9293 3.8.6.2, RFC 1122 4.2.3.3/4.2.3.4), Nagle. */
#include "tcp_helpers.h"

#define MSS 1460

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

static void open_conn(struct th_host *h, struct tp *t, int16_t ws)
{
	struct tp_synopts so = tp_synopts_none();
	so.ws = ws;
	th_host_init(h);
	tp_init(t, h);
	tp_passive_open(t, &so);
}

/* the advertised window is derived from packets not yet consumed: it shrinks while the app keeps them and
 * is larger again once it consumes them */
TEST(flow_window_follows_unconsumed_packets)
{
	struct th_host h;
	struct tp t;
	uint32_t i, last = 0xffffffffU;
	open_conn(&h, &t, 2);
	h.consume = 0;
	for (i = 0; i < 20; i++) {
		tp_send_pat(&t, 1001 + i * MSS, MSS, ACK);
		if (i & 1) {
			uint32_t space = (IIP_CONF_TCP_RX_BUF_PKTS - (i + 1)) * MSS;
			CHECK(tp_pop(&t));
			CHECK_EQ(t.p.ack, 1001 + (i + 1) * MSS);
			CHECK(t.p.win < last);
			/* truncated to the scale, never more than the space (RFC 7323 2.3) */
			CHECK(((uint32_t) t.p.win << IIP_CONF_TCP_WSCALE) <= space);
			CHECK(((uint32_t) t.p.win << IIP_CONF_TCP_WSCALE) > space - 2 * (1 << IIP_CONF_TCP_WSCALE));
			last = t.p.win;
		}
	}
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->rx_unconsumed, 20);
	iip_tcp_rxbuf_consumed(h.ws, t.c, 20, h.opaque);
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->rx_unconsumed, 0);
	EXPECT_NONE(&t); /* the window was wide open: no update needed (RFC 9293 3.8.6.2.2) */
	h.consume = 1;
	tp_send_pat(&t, 1001 + 20 * MSS, MSS, ACK);
	tp_send_pat(&t, 1001 + 21 * MSS, MSS, ACK);
	CHECK(tp_pop(&t));
	CHECK(t.p.win > last);
	CHECK_EQ((uint32_t) t.p.win << IIP_CONF_TCP_WSCALE, IIP_CONF_TCP_RX_BUF_PKTS * MSS);
	done(&h, &t);
}

/* RFC 9293 3.8.6.2.2 / RFC 1122 4.2.3.3 receiver SWS avoidance: a closed window reopens only by at least an MSS */
TEST(rfc1122_4_2_3_3_receiver_sws_avoidance)
{
	struct th_host h;
	struct tp t;
	uint32_t i, seq = 1001;
	open_conn(&h, &t, -1);
	h.consume = 0;
	/* close the window: 1000 one-byte packets, then full ones up to the right edge 66536 */
	for (i = 0; i < 1000; i++, seq++)
		tp_send_pat(&t, seq, 1, ACK);
	while (seq + MSS <= 66536) {
		tp_send_pat(&t, seq, MSS, ACK);
		seq += MSS;
	}
	tp_send_pat(&t, seq, 66536 - seq, ACK);
	CHECK_EQ(h.rx_len, 65535);
	th_advance_ms(&h, 100);
	tp_drain(&t);
	/* 1045 packets held, buffer 1024: consuming 21 frees nothing */
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->rx_unconsumed, 1045);
	iip_tcp_rxbuf_consumed(h.ws, t.c, 21, h.opaque);
	EXPECT_NONE(&t);
	/* one more packet: 1 packet of space = 1 MSS: worth announcing */
	iip_tcp_rxbuf_consumed(h.ws, t.c, 1, h.opaque);
	EXPECT_SEG(&t, ACK, t.iss + 1, 66536);
	CHECK_EQ(t.p.win, MSS);
	iip_tcp_rxbuf_consumed(h.ws, t.c, 2000, h.opaque);
	done(&h, &t);
}

/* RFC 9293 3.8.6.1: zero window: probes after the RTO, with exponential backoff, the connection kept while
 * the peer answers; data flows once the window opens */
TEST(rfc9293_3_8_6_1_zero_window_probe_backoff)
{
	struct th_host h;
	struct tp t;
	uint32_t k, rto, probes = 0;
	open_conn(&h, &t, -1);
	t.win = 0;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 1000), 0);
	EXPECT_NONE(&t);
	rto = ((struct iip_tcp_conn *) t.c)->rto_ms;
	for (k = 0; k < 14; k++) {
		uint32_t wait = rto << (k < 6 ? k : 6); /* the stack caps the persist backoff at 64 x RTO */
		if (wait > IIP_CONF_TCP_RTO_MAX_MS)
			wait = IIP_CONF_TCP_RTO_MAX_MS;
		th_advance_ms(&h, wait - 1);
		EXPECT_NONE(&t);
		th_advance_ms(&h, 1);
		CHECK(tp_pop(&t));
		CHECK_EQ(t.p.flags & ~PSH, ACK);
		CHECK_EQ(t.p.seq, t.iss + 1);
		CHECK(t.p.payload_len <= 1);
		probes++;
		EXPECT_NONE(&t);
		/* the peer answers: still no room */
		tp_send(&t, ACK, NULL, 0);
		EXPECT_NONE(&t);
	}
	CHECK_EQ(h.n_closed, 0);
	CHECK(th_stats(&h).tx_tcp_zwp >= probes - 1);
	CHECK_EQ(th_stats(&h).tx_tcp_fast_retrans, 0);
	/* the window opens */
	t.win = 65535;
	tp_send(&t, ACK, NULL, 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.seq, t.iss + 1);
	CHECK(t.p.payload_len >= 999);
	CHECK(pat_check(t.p.payload, 0, t.p.payload_len));
	done(&h, &t);
}

/* RFC 1122 4.2.3.4: Nagle on by default: a small segment waits while a small one is unacknowledged */
TEST(rfc1122_4_2_3_4_nagle_default_on)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, -1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	CHECK_EQ(th_app_send_pat(&h, t.c, 10, 10), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 20, 10), 0);
	EXPECT_NONE(&t);
	t.rcv = t.iss + 11;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 11, 1001);
	CHECK_EQ(t.p.payload_len, 20); /* the two small sends coalesced */
	CHECK(pat_check(t.p.payload, 10, 20));
	/* a full segment is never held */
	CHECK_EQ(th_app_send_pat(&h, t.c, 30, MSS), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.payload_len, MSS);
	done(&h, &t);
}

/* iip_tcp_set_nodelay: small segments go out at once */
TEST(nagle_off_with_nodelay)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, -1);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 10, 10), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 11, 1001);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 9293 3.8.6.2.1 sender SWS avoidance: with data in flight, a usable window much smaller than an MSS and
 * than half the largest window seen is not used for a tiny segment */
TEST(rfc9293_3_8_6_2_1_sender_sws_avoidance)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, -1);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, MSS), 0);
	CHECK(tp_pop(&t));
	/* the peer acknowledges nothing and shrinks its window to MSS + 100 */
	t.win = MSS + 100;
	t.snd = 1001;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, MSS, 1000), 0);
	EXPECT_NONE(&t); /* 100 bytes usable: not worth a segment */
	t.rcv = t.iss + 1 + MSS;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1 + MSS, 1001);
	CHECK_EQ(t.p.payload_len, 1000);
	done(&h, &t);
}

/* the peer's window limits what is in flight */
TEST(rfc9293_3_8_6_peer_window_limits_flight)
{
	struct th_host h;
	struct tp t;
	uint32_t i, bytes = 0;
	open_conn(&h, &t, -1);
	t.win = 3 * MSS;
	tp_send(&t, ACK, NULL, 0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * MSS, MSS), 0);
	while (tp_pop(&t))
		bytes += t.p.payload_len;
	CHECK_EQ(bytes, 3 * MSS);
	done(&h, &t);
}

/* the peer closes its window while data is in flight and then goes quiet (its window update lost): the
 * sender keeps probing (RFC 9293 3.8.6.1), and the data flows once the window opens */
TEST(rfc9293_3_8_6_1_zero_window_with_data_in_flight)
{
	struct th_host h;
	struct tp t;
	uint32_t i, segs = 0;
	open_conn(&h, &t, -1);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	for (i = 0; i < 3; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * MSS, MSS), 0);
	tp_drain(&t);
	t.win = 0;
	t.rcv = t.iss + 1 + MSS;
	tp_send(&t, ACK, NULL, 0);
	for (i = 0; i < 120; i++) {
		th_advance_ms(&h, 1000);
		while (tp_pop(&t))
			segs++;
	}
	CHECK(segs >= 3);
	CHECK_EQ(h.n_closed, 0);
	t.win = 65535;
	tp_send(&t, ACK, NULL, 0);
	th_advance_ms(&h, 2000);
	{
		uint32_t top = 0;
		while (tp_pop(&t))
			if (t.p.payload_len && t.p.seq + t.p.payload_len - t.iss - 1 > top)
				top = t.p.seq + t.p.payload_len - t.iss - 1;
		CHECK_EQ(top, 3 * MSS);
	}
	done(&h, &t);
}

int main(void)
{
	RUN(flow_window_follows_unconsumed_packets);
	RUN(rfc1122_4_2_3_3_receiver_sws_avoidance);
	RUN(rfc9293_3_8_6_1_zero_window_probe_backoff);
	RUN(rfc9293_3_8_6_1_zero_window_with_data_in_flight);
	RUN(rfc1122_4_2_3_4_nagle_default_on);
	RUN(nagle_off_with_nodelay);
	RUN(rfc9293_3_8_6_2_1_sender_sws_avoidance);
	RUN(rfc9293_3_8_6_peer_window_limits_flight);
	TH_SUMMARY();
}
