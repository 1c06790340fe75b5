/* TCP connection establishment: RFC 9293 3.5, 3.10.7.1-3, RFC 6528, RFC 6298 (SYN timer). */
#include "tcp_helpers.h"

/* RFC 9293 3.5 fig. 6 / 3.10.7.2: LISTEN answers a SYN with <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>,
 * the final ACK makes it ESTABLISHED and the app learns it (accepted). */
TEST(rfc9293_3_5_passive_open)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(h.n_accept, 1);
	CHECK_EQ(h.n_accepted, 1);
	CHECK(t.p.has_mss);
	CHECK_EQ(t.p.mss, 1460);
	CHECK_EQ(t.p.win, 65535);		/* no scaling negotiated: the SYN-ACK window is <= 65535 */
	CHECK(!t.p.has_ws && !t.p.has_ts && !t.p.has_sackp);
	CHECK_EQ(t.p.ttl, 64);
	CHECK_EQ(t.p.ip_frag & 0x4000, 0x4000); /* DF */
	CHECK_EQ(t.p.sport, 80);
	CHECK_EQ(t.p.dport, 40000);
	EXPECT_NONE(&t);			/* the final ACK is not answered */
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	tp_fini(&t);
	th_host_fini(&h);
}

/* accepted is called when the handshake completes, not on the SYN */
TEST(rfc9293_3_5_accepted_only_after_final_ack)
{
	struct th_host h;
	struct tp t;
	struct th_seg s;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	s = tp_seg_at(&t, 1000, SYN, NULL, 0);
	s.opts_len = 0;
	th_send_seg(&h, &s);
	CHECK_EQ(h.n_accept, 1);
	CHECK_EQ(h.n_accepted, 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.flags, SYN | ACK);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.5: active open: SYN with our options, SYN-ACK -> ACK, connected called */
TEST(rfc9293_3_5_active_open)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_all();
	uint8_t peer_mac[6] = TH_MAC_PEER;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.flags, SYN);
	CHECK_EQ(t.p.ack, 0);
	CHECK(t.p.has_mss && t.p.mss == 1460);
	CHECK(t.p.has_sackp);
	CHECK(t.p.has_ts && t.p.tsecr == 0);
	CHECK(t.p.has_ws && t.p.ws == IIP_CONF_TCP_WSCALE);
	CHECK(t.p.win <= 65535);
	CHECK(!memcmp(t.last->data, th_mac_peer, 6));
	CHECK_EQ(h.n_connected, 0);
	/* a second connect on the same 4-tuple is refused */
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), IIP_ERR_EXISTS);
	th_host_fini(&h);
	tp_fini(&t);

	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	tp_active_open(&t, &so);
	CHECK_EQ(h.n_connected, 1);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	CHECK(t.p.has_ts);
	CHECK_EQ(t.p.tsecr, 5000);
	CHECK(tp_conn(&t)->opt_wscale && tp_conn(&t)->opt_sack && tp_conn(&t)->opt_ts);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.5 fig. 8: simultaneous open: SYN in SYN-SENT -> SYN-RECEIVED, SYN,ACK sent; its ACK -> ESTABLISHED */
TEST(rfc9293_3_5_simultaneous_open)
{
	struct th_host h;
	struct tp t;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	/* the peer's own SYN crosses ours */
	{
		struct th_seg s = tp_seg_at(&t, 7000, SYN, NULL, 0);
		uint8_t o[4] = { 2, 4, 0x05, 0xb4 };
		s.opts = o;
		s.opts_len = 4;
		th_send_seg(&h, &s);
	}
	t.irs = 7000;
	t.snd = 7001;
	EXPECT_SEG(&t, SYN | ACK, t.iss, 7001);
	CHECK(t.p.has_mss);
	CHECK_EQ(h.n_connected, 0);
	/* the peer's SYN,ACK (acknowledging our SYN) */
	t.rcv = t.iss + 1;
	tp_send_at(&t, 7000, SYN | ACK, NULL, 0);
	CHECK_EQ(h.n_connected, 1);
	if (h.handle)
		CHECK_EQ(((struct iip_tcp_conn *) h.handle)->state, IIP_TCP_STATE_ESTABLISHED);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.1: segment to a closed port with ACK -> <SEQ=SEG.ACK><CTL=RST> */
TEST(rfc9293_3_10_7_1_rst_closed_port_with_ack)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	tp_init(&t, &h);
	t.rcv = 0x12345678;
	tp_send_at(&t, 555, ACK, (const uint8_t *) "abc", 3);
	EXPECT_SEG(&t, RST, 0x12345678, 0);
	CHECK_EQ(t.p.payload_len, 0);
	CHECK_EQ(th_stats(&h).tx_tcp_rst, 1);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.1: without ACK -> <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> (SYN and FIN count) */
TEST(rfc9293_3_10_7_1_rst_closed_port_without_ack)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_send_at(&t, 555, FIN, (const uint8_t *) "abcd", 4);
	EXPECT_SEG(&t, RST | ACK, 0, 555 + 4 + 1);
	/* a SYN to a port nobody listens on */
	tp_send_at(&t, 900, SYN, NULL, 0);
	EXPECT_SEG(&t, RST | ACK, 0, 901);
	CHECK_EQ(h.n_accept, 1);
	CHECK_EQ(h.n_accepted, 0);
	CHECK_EQ(h.conn_mem[0] != NULL, 1);
	CHECK_EQ(((struct iip_workspace *) h.ws)->conn_pool_cnt, 64);
	/* a RST is never answered */
	tp_send_at(&t, 900, RST, NULL, 0);
	tp_send_at(&t, 900, RST | ACK, NULL, 0);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* ISN (RFC 6528 3): differs per 4-tuple, advances with time, depends on the secret */
TEST(rfc6528_isn_per_tuple_time_and_secret)
{
	struct th_host h;
	struct tp t;
	uint32_t a, b, c, d, e;
	th_host_init(&h);
	th_listen(&h, 80);
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	a = t.p.seq;
	t.sport = 40001;
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	b = t.p.seq;
	CHECK(a != b);
	/* same tuple again later (after the first half-open connection was closed by RST) */
	t.sport = 40000;
	t.rcv = a + 1;
	tp_send_at(&t, 1001, RST | ACK, NULL, 0);
	th_advance_ms(&h, 10);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	c = t.p.seq;
	CHECK_EQ(c - a, 10 * 250); /* the 4 us clock M: 2500 ticks in 10 ms, same F() */
	th_host_fini(&h);
	tp_fini(&t);
	/* another secret, same time and tuple: another ISN */
	th_host_init(&h);
	th_listen(&h, 80);
	{
		uint8_t key[16];
		memset(key, 0x5c, sizeof(key));
		iip_set_isn_secret(h.ws, key);
	}
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	d = t.p.seq;
	CHECK(d != a);
	th_host_fini(&h);
	tp_fini(&t);
	/* the default secret again: same ISN as the first run (keyed function, no hidden state) */
	th_host_init(&h);
	th_listen(&h, 80);
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	e = t.p.seq;
	CHECK_EQ(e, a);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.2: the app refusing in accept: RST, no state */
TEST(rfc9293_3_10_7_1_app_refuses_syn_rst)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	tp_init(&t, &h);
	t.dport = 81; /* not listed in accept_ports: iip_ops_tcp_accept returns 0 */
	th_listen(&h, 80);
	tp_send_at(&t, 3000, SYN, NULL, 0);
	EXPECT_SEG(&t, RST | ACK, 0, 3001);
	CHECK_EQ(h.n_accept, 1);
	CHECK_EQ(th_stats(&h).rx_tcp_refused, 1);
	CHECK_EQ(((struct iip_workspace *) h.ws)->conn_pool_cnt, 64);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 6298 2.1 / 5.5: SYN retransmitted after 1 s, then 2 s, 4 s ... ; after the
 * retry limit the connection is aborted and the app gets closed with a NULL tcp_opaque */
TEST(rfc6298_syn_retransmission_backoff_and_abort)
{
	struct th_host h;
	struct tp t;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	uint32_t iss, i, wait = IIP_CONF_TCP_RTO_INIT_MS;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	CHECK(tp_pop(&t));
	iss = t.p.seq;
	for (i = 0; i < IIP_CONF_TCP_SYN_RETRIES_MAX; i++) {
		th_advance_ms(&h, wait - 1);
		EXPECT_NONE(&t);
		th_advance_ms(&h, 1);
		EXPECT_SEG(&t, SYN, iss, 0);
		CHECK(t.p.has_mss);
		EXPECT_NONE(&t);
		wait *= 2;
	}
	CHECK_EQ(h.n_closed, 0);
	th_advance_ms(&h, wait);
	CHECK_EQ(h.n_closed, 1);
	CHECK(h.closed_opaque == NULL);
	CHECK_EQ(th_stats(&h).tcp_conn_timed_out, 1);
	EXPECT_NONE(&t); /* nothing to reset: the peer never answered */
	CHECK_EQ(((struct iip_workspace *) h.ws)->conn_pool_cnt, 64);
	tp_fini(&t);
	th_host_fini(&h);
}

/* SYN-RECEIVED: the SYN-ACK is retransmitted at 1 s; a retransmitted SYN is answered with the same SYN-ACK */
TEST(rfc9293_3_10_7_4_syn_ack_retransmission)
{
	struct th_host h;
	struct tp t;
	uint32_t iss;
	th_host_init(&h);
	th_listen(&h, 80);
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	iss = t.p.seq;
	th_advance_ms(&h, 999);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, SYN | ACK, iss, 1001);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	EXPECT_SEG(&t, SYN | ACK, iss, 1001);
	t.rcv = iss + 1;
	tp_send_at(&t, 1001, ACK, NULL, 0);
	CHECK_EQ(h.n_accepted, 1);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.3: SYN-SENT, ACK outside (ISS, SND.NXT] -> <SEQ=SEG.ACK><CTL=RST>, connection stays */
TEST(rfc9293_3_10_7_3_syn_sent_bad_ack_rst)
{
	struct th_host h;
	struct tp t;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 100;
	tp_send_at(&t, 7000, SYN | ACK, NULL, 0);
	EXPECT_SEG(&t, RST, t.iss + 100, 0);
	CHECK_EQ(h.n_connected, 0);
	CHECK_EQ(h.n_closed, 0);
	/* an unacceptable RST is dropped silently */
	tp_send_at(&t, 7000, RST | ACK, NULL, 0);
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_closed, 0);
	/* RST with an acceptable ACK: refused -> closed with NULL opaque */
	t.rcv = t.iss + 1;
	tp_send_at(&t, 0, RST | ACK, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK(h.closed_opaque == NULL);
	CHECK_EQ(th_stats(&h).tcp_conn_reset, 1);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.4: SYN-RECEIVED, an ACK that is not acceptable -> <SEQ=SEG.ACK><CTL=RST> */
TEST(rfc9293_3_10_7_4_syn_received_bad_ack_rst)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	th_listen(&h, 80);
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 5;
	tp_send_at(&t, 1001, ACK, NULL, 0);
	EXPECT_SEG(&t, RST, t.iss + 5, 0);
	CHECK_EQ(h.n_accepted, 0);
	/* a RST in SYN-RECEIVED (passive) returns to LISTEN: state freed, app never told */
	tp_send_at(&t, 1001, RST, NULL, 0);
	CHECK_EQ(((struct iip_workspace *) h.ws)->conn_pool_cnt, 64);
	CHECK_EQ(h.n_closed, 0);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.3: data on the SYN-ACK's ACK ... data carried in the final ACK of a passive open is delivered */
TEST(rfc9293_3_10_7_4_data_with_final_ack_delivered)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	th_listen(&h, 80);
	tp_init(&t, &h);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	t.rcv = t.iss + 1;
	tp_send_pat(&t, 1001, 100, ACK | PSH);
	CHECK_EQ(h.n_accepted, 1);
	CHECK_EQ(h.rx_len, 100);
	CHECK(pat_check(h.rx_data, 0, 100));
	tp_fini(&t);
	th_host_fini(&h);
}

int main(void)
{
	RUN(rfc9293_3_5_passive_open);
	RUN(rfc9293_3_5_accepted_only_after_final_ack);
	RUN(rfc9293_3_5_active_open);
	RUN(rfc9293_3_5_simultaneous_open);
	RUN(rfc9293_3_10_7_1_rst_closed_port_with_ack);
	RUN(rfc9293_3_10_7_1_rst_closed_port_without_ack);
	RUN(rfc6528_isn_per_tuple_time_and_secret);
	RUN(rfc9293_3_10_7_1_app_refuses_syn_rst);
	RUN(rfc6298_syn_retransmission_backoff_and_abort);
	RUN(rfc9293_3_10_7_4_syn_ack_retransmission);
	RUN(rfc9293_3_10_7_3_syn_sent_bad_ack_rst);
	RUN(rfc9293_3_10_7_4_syn_received_bad_ack_rst);
	RUN(rfc9293_3_10_7_4_data_with_final_ack_delivered);
	TH_SUMMARY();
}
