/* TCP options: MSS (RFC 9293 3.7.1, RFC 6691), window scale and timestamps (RFC 7323), SACK (RFC 2018, 2883). */
#include "tcp_helpers.h"

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* RFC 6691 / RFC 9293 3.7.1: MSS = MTU - 40 (no options subtracted); iip_set_mtu lowers it */
TEST(rfc6691_mss_from_mtu)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_all();
	th_host_init(&h);
	iip_set_mtu(h.ws, 1400);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	/* the SYN-ACK (in tp_passive_open) */
	done(&h, &t);
	th_host_init(&h);
	iip_set_mtu(h.ws, 1400);
	tp_init(&t, &h);
	th_listen(&h, 80);
	{
		struct th_seg s = tp_seg_at(&t, 1000, SYN, NULL, 0);
		uint8_t o[40];
		s.opts = o;
		s.opts_len = tp_syn_opts(o, &so, 1);
		th_send_seg(&h, &s);
	}
	CHECK(tp_pop(&t));
	CHECK(t.p.has_mss);
	CHECK_EQ(t.p.mss, 1360);
	CHECK_EQ(t.p.ip_len, 20 + 20 + 4 + 4 + 12 + 4);
	done(&h, &t);
}

/* segments are at most min(peer MSS, MTU - 40) minus 12 with timestamps (RFC 7323 / RFC 6691) */
static void check_seg_size(uint16_t mtu, uint16_t peer_mss, uint8_t ts, uint32_t expect)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	if (mtu)
		iip_set_mtu(h.ws, mtu);
	tp_init(&t, &h);
	so.mss = peer_mss;
	so.ts = ts;
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 3000), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.payload_len, expect);
	CHECK(t.p.ip_len <= (mtu ? mtu : 1500));
	CHECK(pat_check(t.p.payload, 0, t.p.payload_len));
	done(&h, &t);
}

TEST(rfc6691_segment_size_limits)
{
	check_seg_size(0, 1460, 0, 1460);
	check_seg_size(0, 1460, 1, 1448);
	check_seg_size(0, 1000, 0, 1000);
	check_seg_size(0, 0, 0, 536);	/* RFC 9293 3.7.1: no option -> 536 */
	check_seg_size(1200, 1460, 0, 1160);
	check_seg_size(1200, 1460, 1, 1148);
}

/* RFC 7323 1.3 / RFC 2018 2: a SYN-ACK carries WS, TS, SACK-permitted only when the SYN offered each */
TEST(rfc7323_options_only_when_offered)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	int i;
	for (i = 0; i < 3; i++) {
		th_host_init(&h);
		tp_init(&t, &h);
		so = tp_synopts_none();
		if (i == 0) so.ws = 2;
		if (i == 1) so.ts = 1;
		if (i == 2) so.sackp = 1;
		tp_passive_open(&t, &so);
		/* t.p is the final-ACK check... the SYN-ACK was parsed before: look at the connection */
		CHECK_EQ(tp_conn(&t)->opt_wscale, i == 0);
		CHECK_EQ(tp_conn(&t)->opt_ts, i == 1);
		CHECK_EQ(tp_conn(&t)->opt_sack, i == 2);
		done(&h, &t);
		/* and on the wire */
		th_host_init(&h);
		tp_init(&t, &h);
		th_listen(&h, 80);
		{
			struct th_seg s = tp_seg_at(&t, 1000, SYN, NULL, 0);
			uint8_t o[40];
			s.opts = o;
			s.opts_len = tp_syn_opts(o, &so, 77);
			th_send_seg(&h, &s);
		}
		CHECK(tp_pop(&t));
		CHECK_EQ(t.p.has_ws, i == 0);
		CHECK_EQ(t.p.has_ts, i == 1);
		CHECK_EQ(t.p.has_sackp, i == 2);
		if (i == 1)
			CHECK_EQ(t.p.tsecr, 77);
		if (i == 0)
			CHECK_EQ(t.p.ws, IIP_CONF_TCP_WSCALE);
		done(&h, &t);
	}
}

/* RFC 7323 2.2/2.3: the SYN-ACK window is unscaled; later windows are scaled by our shift, the
 * peer's windows by its shift (clamped to 14) */
TEST(rfc7323_2_window_scaling)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t space = IIP_CONF_TCP_RX_BUF_PKTS * 1460U;
	th_host_init(&h);
	tp_init(&t, &h);
	so.ws = 2;
	t.win = 100; /* the peer offers 100 << 2 = 400 bytes */
	tp_passive_open(&t, &so);
	tp_send_pat(&t, 1001, 10, ACK | PSH);
	th_advance_ms(&h, 50);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.win, space >> 7); /* the app consumed: the whole buffer */
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 1000), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.payload_len, 400);
	EXPECT_NONE(&t);
	done(&h, &t);
	/* a shift of 15 is used as 14 */
	th_host_init(&h);
	tp_init(&t, &h);
	so.ws = 15;
	t.win = 1;
	tp_passive_open(&t, &so);
	CHECK_EQ(tp_conn(&t)->snd_wnd, 1U << 14);
	done(&h, &t);
}

/* RFC 7323 3.2/4.3: with timestamps every segment carries TSval and echoes TS.Recent */
TEST(rfc7323_3_timestamps_echoed)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t v1;
	th_host_init(&h);
	tp_init(&t, &h);
	so.ts = 1;
	tp_passive_open(&t, &so);
	t.tsval = 6000;
	tp_send_pat(&t, 1001, 10, ACK);
	t.tsval = 6001;
	tp_send_pat(&t, 1011, 10, ACK);
	CHECK(tp_pop(&t));
	CHECK(t.p.has_ts);
	CHECK_EQ(t.p.tsecr, 6000); /* TS.Recent from the segment starting the ACKed run (RFC 7323 4.3) */
	v1 = t.p.tsval;
	th_advance_ms(&h, 5);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	CHECK(tp_pop(&t));
	CHECK(t.p.has_ts);
	CHECK_EQ(t.p.tsval - v1, 5); /* a 1 ms clock */
	done(&h, &t);
}

/* not negotiated: no timestamp on our segments even if the peer later sends one */
TEST(rfc7323_3_2_no_timestamps_unless_negotiated)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	t.ts = 1;
	tp_send_pat(&t, 1001, 10, ACK);
	tp_send_pat(&t, 1011, 10, ACK);
	CHECK(tp_pop(&t));
	CHECK(!t.p.has_ts);
	CHECK_EQ(h.rx_len, 20);
	done(&h, &t);
}

/* RFC 7323 5.3: PAWS: a segment whose TSval is older than TS.Recent is dropped and ACKed */
TEST(rfc7323_5_3_paws_drop)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	so.ts = 1;
	tp_passive_open(&t, &so);
	t.tsval = 9000;
	tp_send_pat(&t, 1001, 10, ACK);
	th_advance_ms(&h, 50);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1011);
	t.tsval = 8000; /* an old duplicate from a previous wrap */
	tp_send_pat(&t, 1011, 10, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1011);
	CHECK_EQ(t.p.tsecr, 9000);
	CHECK_EQ(h.rx_len, 10);
	CHECK_EQ(th_stats(&h).rx_tcp_paws, 1);
	/* a RST is not subject to PAWS (RFC 7323 5.2) */
	tp_send_at(&t, 1011, RST, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	done(&h, &t);
}

/* RFC 2018 4: out-of-order data is ACKed at once with SACK blocks, the first block holding the latest arrival */
TEST(rfc2018_4_sack_blocks_latest_first)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	so.sackp = 1;
	tp_passive_open(&t, &so);
	tp_send_pat(&t, 1201, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.sack_blocks, 1);
	CHECK_EQ(t.p.sack[0], 1201);
	CHECK_EQ(t.p.sack[1], 1301);
	tp_send_pat(&t, 1401, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.sack_blocks, 2);
	CHECK_EQ(t.p.sack[0], 1401);
	CHECK_EQ(t.p.sack[1], 1501);
	CHECK_EQ(t.p.sack[2], 1201);
	CHECK_EQ(t.p.sack[3], 1301);
	tp_send_pat(&t, 1601, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.sack_blocks, 3);
	CHECK_EQ(t.p.sack[0], 1601);
	/* RFC 2018 4: the second block repeats the most recently reported one */
	CHECK_EQ(t.p.sack[2], 1401);
	CHECK_EQ(t.p.sack[4], 1201);
	tp_send_pat(&t, 1301, 100, ACK); /* joins 1201..1501 */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.sack_blocks, 2);
	CHECK_EQ(t.p.sack[0], 1201);
	CHECK_EQ(t.p.sack[1], 1501);
	CHECK_EQ(t.p.sack[2], 1601);
	CHECK_EQ(t.p.sack[3], 1701);
	tp_send_pat(&t, 1001, 200, ACK); /* fills the first hole: ACK at once, SACK for the rest */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1501);
	CHECK_EQ(t.p.sack_blocks, 1);
	CHECK_EQ(t.p.sack[0], 1601);
	CHECK_EQ(h.rx_len, 500);
	CHECK(pat_check(h.rx_data, 0, 500));
	tp_send_pat(&t, 1501, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1701);
	CHECK_EQ(t.p.sack_blocks, 0);
	CHECK_EQ(h.rx_len, 700);
	CHECK(pat_check(h.rx_data, 0, 700));
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 2018: no SACK option unless SACK-permitted was negotiated */
TEST(rfc2018_no_sack_unless_permitted)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	tp_send_pat(&t, 1201, 100, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.sack_blocks, 0);
	done(&h, &t);
}

/* RFC 2883: a D-SACK block (below the cumulative ACK) is tolerated: no retransmission, no recovery */
TEST(rfc2883_dsack_tolerated)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint8_t o[12];
	th_host_init(&h);
	tp_init(&t, &h);
	so.sackp = 1;
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 2000), 0);
	CHECK(tp_pop(&t));
	CHECK(tp_pop(&t));
	t.rcv = t.iss + 1 + 1460;
	tp_send(&t, ACK, NULL, 0);
	/* D-SACK for the first 100 bytes (already acknowledged) */
	o[0] = 1; o[1] = 1; o[2] = 5; o[3] = 10;
	put32_(o + 4, t.iss + 1);
	put32_(o + 8, t.iss + 101);
	memcpy(t.opts, o, 12);
	t.opts_len = 12;
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	t.opts_len = 0;
	CHECK_EQ(tp_conn(&t)->in_recovery, 0);
	CHECK_EQ(tp_conn(&t)->scoreboard_cnt, 0);
	EXPECT_NONE(&t);
	t.rcv = t.iss + 2001;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, 1);
	done(&h, &t);
}

/* RFC 9293 3.1: malformed options (length past the header) drop the segment without crashing */
TEST(rfc9293_3_1_malformed_options_dropped)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint8_t o[4] = { 8, 40, 0, 0 };
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	memcpy(t.opts, o, 4);
	t.opts_len = 4;
	tp_send_pat(&t, 1001, 10, ACK);
	CHECK_EQ(h.rx_len, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_bad_options, 1);
	o[0] = 2; o[1] = 0; /* zero length */
	memcpy(t.opts, o, 4);
	tp_send_pat(&t, 1001, 10, ACK);
	CHECK_EQ(h.rx_len, 0);
	/* unknown option of valid length: skipped */
	o[0] = 99; o[1] = 4;
	memcpy(t.opts, o, 4);
	tp_send_pat(&t, 1001, 10, ACK);
	CHECK_EQ(h.rx_len, 10);
	t.opts_len = 0;
	done(&h, &t);
}

/* RFC 9293 3.7.1: a tiny or zero MSS option never makes the segment size wrap (with the timestamp overhead) */
TEST(rfc9293_3_7_1_tiny_peer_mss)
{
	uint16_t mss[3] = { 0, 1, 8 };
	uint32_t k;
	for (k = 0; k < 3; k++) {
		struct th_host h;
		struct tp t;
		struct tp_synopts so = tp_synopts_none();
		uint32_t n = 0;
		th_host_init(&h);
		tp_init(&t, &h);
		so.ts = 1;
		so.mss = mss[k];
		if (!mss[k])
			so.mss = 0xffff; /* placeholder, patched below */
		th_listen(&h, 80);
		{
			struct th_seg s = tp_seg_at(&t, 1000, SYN, NULL, 0);
			uint8_t o[40];
			s.opts = o;
			s.opts_len = tp_syn_opts(o, &so, 1);
			if (!mss[k])
				put16_(o + 2, 0);
			th_send_seg(&h, &s);
		}
		CHECK(tp_pop(&t));
		t.iss = t.p.seq;
		t.rcv = t.iss + 1;
		t.ts = 1;
		tp_send_at(&t, 1001, ACK, NULL, 0);
		t.snd = 1001;
		CHECK(h.handle != NULL);
		if (h.handle) {
			iip_tcp_set_nodelay(h.ws, h.handle, 1);
			CHECK_EQ(th_app_send_pat(&h, h.handle, 0, 1000), 0);
			while (tp_pop(&t)) {
				CHECK(t.p.payload_len <= 536);
				CHECK(t.p.ip_len <= 1500);
				n++;
			}
			CHECK(n >= 1);
		}
		done(&h, &t);
	}
}

/* RFC 2018 3: at most 4 SACK blocks, 3 beside timestamps */
TEST(rfc2018_3_sack_block_count_limit)
{
	uint32_t ts;
	for (ts = 0; ts < 2; ts++) {
		struct th_host h;
		struct tp t;
		struct tp_synopts so = tp_synopts_none();
		uint32_t i;
		th_host_init(&h);
		tp_init(&t, &h);
		so.sackp = 1;
		so.ts = (uint8_t) ts;
		tp_passive_open(&t, &so);
		for (i = 0; i < 6; i++) {
			tp_send_pat(&t, 1001 + 100 + i * 200, 100, ACK);
			CHECK(tp_pop(&t));
		}
		CHECK_EQ(t.p.sack_blocks, ts ? 3 : 4);
		CHECK_EQ(t.p.sack[0], 1001 + 100 + 5 * 200);
		CHECK_EQ(t.p.sack[2], 1001 + 100 + 4 * 200);
		CHECK(t.p.ip_len - 20 - 20 <= 40);
		done(&h, &t);
	}
}

int main(void)
{
	RUN(rfc6691_mss_from_mtu);
	RUN(rfc6691_segment_size_limits);
	RUN(rfc7323_options_only_when_offered);
	RUN(rfc7323_2_window_scaling);
	RUN(rfc7323_3_timestamps_echoed);
	RUN(rfc7323_3_2_no_timestamps_unless_negotiated);
	RUN(rfc7323_5_3_paws_drop);
	RUN(rfc2018_4_sack_blocks_latest_first);
	RUN(rfc2018_no_sack_unless_permitted);
	RUN(rfc2883_dsack_tolerated);
	RUN(rfc9293_3_1_malformed_options_dropped);
	RUN(rfc9293_3_7_1_tiny_peer_mss);
	RUN(rfc2018_3_sack_block_count_limit);
	TH_SUMMARY();
}
