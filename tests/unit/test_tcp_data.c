/* Data transfer and acknowledgment: RFC 9293 3.10.7.4 (text), RFC 5681 4.2 / RFC 1122 4.2.3.2 (ACK generation),
 * reassembly (head_off / tail_off of iip_ops_tcp_payload), batching (one ACK per connection per iip_run). */
#include "tcp_helpers.h"

static void open_conn(struct th_host *h, struct tp *t, uint8_t sack)
{
	struct tp_synopts so = tp_synopts_none();
	so.sackp = sack;
	th_host_init(h);
	tp_init(t, h);
	tp_passive_open(t, &so);
}

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* RFC 1122 4.2.3.2 / RFC 5681 4.2: a lone segment's ACK is delayed, at most IIP_CONF_TCP_DELAYED_ACK_MS */
TEST(rfc1122_4_2_3_2_delayed_ack_timer)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, 0);
	tp_send_pat(&t, 1001, 1460, ACK);
	EXPECT_NONE(&t);
	CHECK(h.next_us <= IIP_CONF_TCP_DELAYED_ACK_MS * 1000);
	th_advance_ms(&h, IIP_CONF_TCP_DELAYED_ACK_MS - 1);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001 + 1460);
	EXPECT_NONE(&t);
	CHECK_EQ(h.rx_len, 1460);
	done(&h, &t);
}

/* RFC 5681 4.2: an ACK for at least every second full-sized segment */
TEST(rfc5681_4_2_ack_every_second_segment)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	open_conn(&h, &t, 0);
	for (i = 0; i < 6; i++) {
		tp_send_pat(&t, 1001 + i * 1460, 1460, ACK);
		if (i & 1)
			EXPECT_SEG(&t, ACK, t.iss + 1, 1001 + (i + 1) * 1460);
		else
			EXPECT_NONE(&t);
	}
	CHECK_EQ(h.rx_len, 6 * 1460);
	CHECK(pat_check(h.rx_data, 0, 6 * 1460));
	CHECK(th_stats(&h).rx_tcp_fast_path >= 6);
	done(&h, &t);
}

/* one ACK per connection per iip_run batch, acknowledging everything in it */
TEST(batch_one_ack_per_connection)
{
	struct th_host h;
	struct tp t;
	struct th_seg segs[10];
	static uint8_t buf[10][1460];
	uint32_t i;
	open_conn(&h, &t, 0);
	for (i = 0; i < 10; i++) {
		pat_fill(buf[i], i * 1460, 1460);
		segs[i] = tp_seg_at(&t, 1001 + i * 1460, ACK, buf[i], 1460);
	}
	th_run_batch(&h, segs, 10);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001 + 10 * 1460);
	EXPECT_NONE(&t);
	CHECK_EQ(h.rx_len, 14600);
	CHECK(pat_check(h.rx_data, 0, 14600));
	CHECK_EQ(h.flushes > 0, 1);
	done(&h, &t);
}

/* one ACK per batch with out-of-order segments in it too (each would ask for an immediate ACK) */
TEST(batch_one_ack_with_out_of_order)
{
	struct th_host h;
	struct tp t;
	struct th_seg segs[4];
	static uint8_t buf[4][100];
	uint32_t i, order[4] = { 1, 3, 0, 2 };
	open_conn(&h, &t, 1);
	for (i = 0; i < 4; i++) {
		pat_fill(buf[i], order[i] * 100, 100);
		segs[i] = tp_seg_at(&t, 1001 + order[i] * 100, ACK, buf[i], 100);
	}
	th_run_batch(&h, segs, 4);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1401);
	CHECK_EQ(t.p.sack_blocks, 0);
	EXPECT_NONE(&t);
	CHECK_EQ(h.rx_len, 400);
	CHECK(pat_check(h.rx_data, 0, 400));
	done(&h, &t);
}

/* RFC 5681 4.2: out-of-order data -> immediate (duplicate) ACK; filling the gap -> immediate ACK */
TEST(rfc5681_4_2_immediate_ack_out_of_order_and_gap_fill)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, 0);
	tp_send_pat(&t, 1101, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(h.rx_len, 0);
	tp_send_pat(&t, 1001, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1201);
	CHECK_EQ(h.rx_len, 200);
	CHECK(pat_check(h.rx_data, 0, 200));
	/* a duplicate is ACKed at once too (RFC 9293 3.10.7.4) */
	tp_send_pat(&t, 1001, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1201);
	CHECK_EQ(h.rx_len, 200);
	done(&h, &t);
}

/* reassembly: overlapping in-order and out-of-order segments; the app sees each byte exactly once */
TEST(reassembly_overlaps_each_byte_once)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, 1);
	tp_send_pat(&t, 1001, 100, ACK);	/* [0,100) */
	tp_send_pat(&t, 1051, 100, ACK);	/* [50,150): 50 new */
	tp_send_pat(&t, 1301, 100, ACK);	/* [300,400) ooo */
	tp_send_pat(&t, 1251, 100, ACK);	/* [250,350) ooo, overlaps */
	tp_send_pat(&t, 1321, 40, ACK);		/* inside [300,400): wholly duplicate ooo */
	tp_send_pat(&t, 1501, 50, ACK);		/* [500,550) ooo */
	tp_send_pat(&t, 1121, 200, ACK);	/* [120,320): fills up to 400 */
	CHECK_EQ(h.rx_len, 400);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	tp_send_pat(&t, 1381, 200, ACK);	/* [380,580): overlaps both sides */
	CHECK_EQ(h.rx_len, 580);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	tp_drain(&t);
	tp_send_pat(&t, 1581, 20, ACK);
	th_advance_ms(&h, 100);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.ack, 1601);
	CHECK_EQ(h.rx_len, 600);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	done(&h, &t);
}

/* RFC 9293 3.10.7.4: data beyond the offered window is cut (tail_off), later resent and delivered once */
TEST(rfc9293_3_10_7_4_beyond_window_trimmed)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	open_conn(&h, &t, 0);
	/* the SYN-ACK offered 65535 (no window scaling): the right edge is 1001 + 65535 */
	tp_send_pat(&t, 1001 + 65000, 1000, ACK);	/* out of order, 465 bytes beyond */
	tp_drain(&t);
	for (i = 0; i < 50; i++)
		tp_send_pat(&t, 1001 + i * 1300, 1300, ACK);
	tp_drain(&t);
	CHECK_EQ(h.rx_len, 65535);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	tp_send_pat(&t, 1001 + 65000, 1000, ACK);	/* the peer resends the segment */
	CHECK_EQ(h.rx_len, 66000);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	done(&h, &t);
}

/* in-order data partly beyond the window: the part inside is delivered, the rest cut (tail_off) */
TEST(rfc9293_3_10_7_4_in_order_partly_beyond_window)
{
	struct th_host h;
	struct tp t;
	uint32_t i, seq = 1001;
	open_conn(&h, &t, 0);
	h.consume = 0; /* the app keeps everything: the window closes packet by packet */
	/* the SYN-ACK offered 65535 (no scaling): the right edge 66536 never moves left */
	for (i = 0; i < 1000; i++, seq++)
		tp_send_pat(&t, seq, 1, ACK);
	for (i = 0; i < 44; i++, seq += 1460)
		tp_send_pat(&t, seq, 1460, ACK);
	tp_drain(&t);
	CHECK_EQ(seq, 66241);
	tp_send_pat(&t, seq, 1460, ACK);
	CHECK_EQ(h.rx_len, 66536 - 1001);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	th_advance_ms(&h, IIP_CONF_TCP_DELAYED_ACK_MS);
	EXPECT_SEG(&t, ACK, t.iss + 1, 66536);
	CHECK_EQ(t.p.win, 0);
	iip_tcp_rxbuf_consumed(h.ws, t.c, (uint16_t) h.n_payload, h.opaque);
	/* the window reopened: a window update (RFC 9293 3.8.6.2.2) */
	EXPECT_SEG(&t, ACK, t.iss + 1, 66536);
	CHECK_EQ(t.p.win, 65535);
	tp_send_pat(&t, 66536, 1460, ACK);
	CHECK_EQ(h.rx_len, 66536 - 1001 + 1460);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	iip_tcp_rxbuf_consumed(h.ws, t.c, 1, h.opaque);
	done(&h, &t);
}

/* RFC 9293 3.10.7.4: data after our peer's FIN is not delivered; segments on a closed port get RST */
TEST(rfc9293_3_10_7_4_nothing_after_fin)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, 0);
	tp_send_pat(&t, 1001, 10, ACK | FIN);
	t.snd = 1012;
	EXPECT_SEG(&t, ACK, t.iss + 1, 1012);
	tp_send_pat(&t, 1012, 10, ACK);
	CHECK_EQ(h.rx_len, 10);
	done(&h, &t);
}

/* acked callback: once per packet when all its bytes are acknowledged, in order */
TEST(rfc9293_3_10_7_4_acked_callback_per_packet)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t, 0);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 100, 100), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 200, 100), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 101, 1001);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 201, 1001);
	t.rcv = t.iss + 150;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, 1);
	t.rcv = t.iss + 301;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, 3);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* reassembly under a storm of random overlapping, duplicate and out-of-order segments (fixed seed), more than
 * the out-of-order queue holds: the app sees every byte exactly once and in order, nothing leaks */
TEST(reassembly_random_overlaps_property)
{
	struct th_host h;
	struct tp t;
	uint32_t x = 12345, i, total = 20000, round;
	open_conn(&h, &t, 1);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 400; i++) {
			uint32_t off, len;
			x = x * 1103515245U + 12345U;
			off = (x >> 8) % total;
			x = x * 1103515245U + 12345U;
			len = 1 + (x >> 8) % 1400;
			if (off + len > total)
				len = total - off;
			tp_send_pat(&t, 1001 + off, len, ACK);
			tp_drain(&t);
		}
		CHECK(pat_check(h.rx_data, 0, h.rx_len));
	}
	/* the peer resends everything in order */
	for (i = 0; i < total; i += 1000)
		tp_send_pat(&t, 1001 + i, 1000, ACK);
	CHECK_EQ(h.rx_len, total);
	CHECK(pat_check(h.rx_data, 0, h.rx_len));
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->ooo.cnt, 0);
	CHECK(th_stats(&h).rx_tcp_ooo > 0);
	tp_drain(&t);
	done(&h, &t);
}

/* one ACK per connection per batch also when the batch holds segments that ask for a challenge ACK
 * (in-window RST, SYN) or an immediate ACK (PAWS, old duplicate) besides data */
TEST(batch_one_ack_with_challenge_acks)
{
	struct th_host h;
	struct tp t;
	struct th_seg segs[4];
	static uint8_t buf[100];
	open_conn(&h, &t, 0);
	pat_fill(buf, 0, 100);
	segs[0] = tp_seg_at(&t, 1001, ACK, buf, 100);
	segs[1] = tp_seg_at(&t, 1001 + 500, RST, NULL, 0);
	segs[2] = tp_seg_at(&t, 1001 + 600, SYN, NULL, 0);
	segs[3] = tp_seg_at(&t, 901, ACK, buf, 50); /* old duplicate */
	th_run_batch(&h, segs, 4);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1101);
	EXPECT_NONE(&t);
	CHECK_EQ(th_stats(&h).rx_tcp_challenge_ack, 2);
	CHECK_EQ(h.rx_len, 100);
	CHECK_EQ(h.n_closed, 0);
	done(&h, &t);
}

int main(void)
{
	RUN(rfc1122_4_2_3_2_delayed_ack_timer);
	RUN(rfc5681_4_2_ack_every_second_segment);
	RUN(batch_one_ack_per_connection);
	RUN(batch_one_ack_with_out_of_order);
	RUN(rfc5681_4_2_immediate_ack_out_of_order_and_gap_fill);
	RUN(reassembly_overlaps_each_byte_once);
	RUN(rfc9293_3_10_7_4_beyond_window_trimmed);
	RUN(rfc9293_3_10_7_4_in_order_partly_beyond_window);
	RUN(rfc9293_3_10_7_4_nothing_after_fin);
	RUN(rfc9293_3_10_7_4_acked_callback_per_packet);
	RUN(reassembly_random_overlaps_property);
	RUN(batch_one_ack_with_challenge_acks);
	TH_SUMMARY();
}
