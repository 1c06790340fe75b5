/* The application inside callbacks: replies piggyback the ACK (one segment per connection per batch),
 * close on the peer's FIN, data sent from accepted; and a few sequence-space edge cases. */
#include "tcp_helpers.h"

static struct iip_workspace *WS(struct th_host *h) { return (struct iip_workspace *) h->ws; }

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

static uint32_t reply_off;

static void reply_on_payload(struct th_host *h, void *handle, const uint8_t *data, uint32_t len)
{
	(void) data;
	if (len) {
		CHECK_EQ(th_app_send_pat(h, handle, reply_off, len), 0);
		reply_off += len;
	}
}

static void close_on_fin(struct th_host *h, void *handle, const uint8_t *data, uint32_t len)
{
	(void) data; (void) len;
	if (h->fin_seen)
		CHECK_EQ(iip_tcp_close(h->ws, handle, h->opaque), 0);
}

static void greet_on_accepted(struct th_host *h, void *handle)
{
	CHECK_EQ(th_app_send_pat(h, handle, 0, 50), 0);
}

/* a reply sent from iip_ops_tcp_payload carries the ACK: one segment, no separate pure ACK */
TEST(batch_reply_piggybacks_ack)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	reply_off = 0;
	h.on_payload = reply_on_payload;
	tp_send_pat(&t, 1001, 100, ACK | PSH);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1101);
	CHECK_EQ(t.p.payload_len, 100);
	EXPECT_NONE(&t);
	/* the next request acknowledges the reply: fast path with an ACK advance, and again one segment */
	t.rcv = t.iss + 101;
	tp_send_pat(&t, 1101, 100, ACK | PSH);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 101, 1201);
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_acked, 1);
	done(&h, &t);
}

/* the app closing when it sees the peer's FIN: our FIN carries the ACK of theirs, one segment */
TEST(batch_close_on_fin_one_segment)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	h.on_payload = close_on_fin;
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1002);
	EXPECT_NONE(&t);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_LAST_ACK);
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	done(&h, &t);
}

/* data sent from iip_ops_tcp_accepted goes out in the same batch */
TEST(send_from_accepted)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	h.on_accepted = greet_on_accepted;
	th_listen(&h, 80);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 1;
	tp_send_at(&t, 1001, ACK, NULL, 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	CHECK_EQ(t.p.payload_len, 50);
	CHECK(pat_check(t.p.payload, 0, 50));
	(void) so;
	done(&h, &t);
}

/* sequence numbers wrapping through 2^32: data delivered in order, ACKs wrap */
TEST(rfc9293_3_4_sequence_wraparound)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t i, seq;
	th_host_init(&h);
	tp_init(&t, &h);
	t.irs = 0xfffffc00U;
	tp_passive_open(&t, &so);
	seq = t.irs + 1;
	for (i = 0; i < 4; i++, seq += 512)
		tp_send_pat(&t, seq, 512, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, t.irs + 1 + 1024);
	EXPECT_SEG(&t, ACK, t.iss + 1, t.irs + 1 + 2048);
	CHECK_EQ(t.p.ack, 0x401U);
	CHECK_EQ(h.rx_len, 2048);
	CHECK(pat_check(h.rx_data, 0, 2048));
	/* out of order across the wrap */
	tp_send_pat(&t, seq + 512, 512, ACK);
	tp_send_pat(&t, seq, 512, ACK);
	CHECK_EQ(h.rx_len, 3072);
	CHECK(pat_check(h.rx_data, 0, 3072));
	done(&h, &t);
}

/* a FIN that arrives out of order is held and takes effect once the gap is filled */
TEST(rfc9293_3_10_7_4_out_of_order_fin)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	tp_send_pat(&t, 1101, 50, ACK | FIN);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK(!h.fin_seen);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	tp_send_pat(&t, 1001, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1152);
	CHECK(h.fin_seen);
	CHECK_EQ(h.rx_len, 150);
	CHECK(pat_check(h.rx_data, 0, 150));
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_CLOSE_WAIT);
	done(&h, &t);
}

/* active open to a peer without window scaling: our windows are unscaled and capped at 65535 */
TEST(rfc7323_2_active_open_without_peer_wscale)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	tp_active_open(&t, &so);
	CHECK_EQ(t.p.win, 65535);
	CHECK(!t.p.has_ts);
	tp_send_pat(&t, t.irs + 1, 100, ACK);
	tp_send_pat(&t, t.irs + 101, 100, ACK);
	CHECK(tp_pop(&t));
	/* receiver SWS avoidance (RFC 9293 3.8.6.2.2): the right edge moves only by an MSS or more */
	CHECK_EQ(t.p.win, 65535 - 200);
	CHECK(!t.p.has_ts && !t.p.sack_blocks);
	done(&h, &t);
}

/* RFC 7323 4.1: with timestamps the RTT comes from the echoed TSval */
TEST(rfc7323_4_1_rtt_from_timestamps)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	struct iip_tcp_info i;
	th_host_init(&h);
	tp_init(&t, &h);
	so.ts = 1;
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK(tp_pop(&t)); /* t.ts_ecr = its TSval */
	th_advance_ms(&h, 400);
	t.rcv = t.iss + 101;
	tp_send(&t, ACK, NULL, 0);
	iip_tcp_get_info(h.ws, t.c, &i);
	/* first sample from the handshake was ~0 ms; the second is 400 ms: SRTT = 50, RTTVAR = 100.x */
	CHECK_EQ(i.srtt_ms, 50);
	CHECK(i.rto_ms >= 400 && i.rto_ms <= 460);
	done(&h, &t);
}

/* our final ACK of an active open was lost: the peer's retransmitted SYN-ACK is answered with an ACK */
TEST(rfc9293_3_10_7_4_duplicate_syn_ack_in_established)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	tp_active_open(&t, &so);
	tp_send_at(&t, t.irs, SYN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, t.irs + 1);
	EXPECT_NONE(&t);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	CHECK_EQ(h.n_connected, 1);
	done(&h, &t);
}

/* a SYN-ACK without MSS option: 536-byte segments (RFC 9293 3.7.1) */
TEST(rfc9293_3_7_1_active_open_default_mss)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	so.mss = 0;
	tp_active_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 1000), 0);
	EXPECT_DATA(&t, t.iss + 1, t.irs + 1, 536);
	EXPECT_DATA(&t, t.iss + 537, t.irs + 1, 464);
	done(&h, &t);
}

/* the peer shrinks its window below what is in flight (RFC 9293 3.8.6 discourages, must be survived) */
TEST(rfc9293_3_8_6_peer_shrinks_window)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t i;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	for (i = 0; i < 6; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * 1460, 1460), 0);
	tp_drain(&t);
	t.win = 1000;
	t.rcv = t.iss + 1 + 1460;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_NONE(&t);
	t.rcv = t.iss + 1 + 6 * 1460;
	t.win = 65535;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, 6);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* a segment that arrives in two IP fragments is reassembled and delivered */
TEST(rfc791_fragmented_segment_delivered)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	static uint8_t seg[2000], f[2048];
	struct th_seg s;
	struct th_ip d = th_ip_default(6);
	uint32_t n, l4;
	static uint8_t data[1200];
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	pat_fill(data, 0, 1200);
	s = tp_seg_at(&t, 1001, ACK | PSH, data, 1200);
	n = th_build_tcp(seg, &s);
	l4 = n - 14 - 20;
	th_run(&h, f, th_build_frag(f, &d, seg + 34, 0, 608, 1));
	CHECK_EQ(h.rx_len, 0);
	th_run(&h, f, th_build_frag(f, &d, seg + 34, 608, l4 - 608, 0));
	CHECK_EQ(h.rx_len, 1200);
	CHECK(pat_check(h.rx_data, 0, 1200));
	th_advance_ms(&h, 50);
	EXPECT_SEG(&t, ACK, t.iss + 1, 2201);
	done(&h, &t);
}

/* PSH/URG from iip_tcp_send: PSH set on the segment; URG comes with an urgent pointer that points at the octet
 * after the urgent data (RFC 9293 3.8.5, RFC 6093), never 0 */
TEST(rfc9293_3_8_5_urgent_pointer)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	struct th_pkt *p;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	p = th_pkt_new();
	pat_fill(p->data, 0, 20);
	p->len = 20;
	CHECK_EQ(iip_tcp_send(h.ws, t.c, p, IIP_TCP_FLAG_URG, h.opaque), 0);
	CHECK(tp_pop(&t));
	CHECK(t.p.flags & IIP_TCP_FLAG_URG);
	CHECK_EQ(be16_(t.p.ip + t.p.ip_hl + 18), 20);
	done(&h, &t);
}

static void close_on_accepted(struct th_host *h, void *handle)
{
	CHECK_EQ(iip_tcp_close(h->ws, handle, h->opaque), 0);
}

/* the app closing from iip_ops_tcp_accepted: our FIN goes out at once, data the final ACK carried is still
 * delivered (half-close) */
TEST(close_from_accepted)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	tp_init(&t, &h);
	h.on_accepted = close_on_accepted;
	th_listen(&h, 80);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 1;
	tp_send_pat(&t, 1001, 10, ACK);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1011);
	EXPECT_NONE(&t);
	CHECK_EQ(h.rx_len, 10);
	CHECK_EQ(((struct iip_tcp_conn *) h.handle)->state, IIP_TCP_STATE_FIN_WAIT_1);
	t.rcv = t.iss + 2;
	tp_send_at(&t, 1011, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1012);
	CHECK_EQ(h.n_closed, 1);
	done(&h, &t);
}

int main(void)
{
	RUN(batch_reply_piggybacks_ack);
	RUN(batch_close_on_fin_one_segment);
	RUN(send_from_accepted);
	RUN(rfc9293_3_4_sequence_wraparound);
	RUN(rfc9293_3_10_7_4_out_of_order_fin);
	RUN(rfc7323_2_active_open_without_peer_wscale);
	RUN(rfc7323_4_1_rtt_from_timestamps);
	RUN(rfc9293_3_10_7_4_duplicate_syn_ack_in_established);
	RUN(rfc9293_3_7_1_active_open_default_mss);
	RUN(rfc9293_3_8_6_peer_shrinks_window);
	RUN(rfc791_fragmented_segment_delivered);
	RUN(rfc9293_3_8_5_urgent_pointer);
	RUN(close_from_accepted);
	TH_SUMMARY();
}
