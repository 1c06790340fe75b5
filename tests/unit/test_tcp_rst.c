/* RST processing and blind in-window attacks: RFC 9293 3.10.7.4 (first, second, fourth, fifth steps), RFC 5961. */
#include "tcp_helpers.h"

static struct iip_workspace *WS(struct th_host *h) { return (struct iip_workspace *) h->ws; }

static void open_conn(struct th_host *h, struct tp *t)
{
	struct tp_synopts so = tp_synopts_none();
	th_host_init(h);
	tp_init(t, h);
	tp_passive_open(t, &so);
}

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* RFC 5961 3.2: a RST whose sequence number is exactly RCV.NXT resets the connection */
TEST(rfc5961_3_2_exact_rst_resets)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	tp_send_at(&t, 1001, RST, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK(h.closed_opaque == (void *) &h);
	CHECK_EQ(th_stats(&h).tcp_conn_reset, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 5961 3.2: a RST in the window but not at RCV.NXT -> challenge ACK <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> */
TEST(rfc5961_3_2_in_window_rst_challenge_ack)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	tp_send_at(&t, 1001 + 100, RST, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(t.p.payload_len, 0);
	CHECK_EQ(h.n_closed, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_challenge_ack, 1);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	/* the genuine peer answers the challenge with the exact RST */
	tp_send_at(&t, 1001, RST, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	done(&h, &t);
}

/* RFC 5961 3.2 / RFC 9293 3.10.7.4 first step: a RST outside the window is dropped silently */
TEST(rfc5961_3_2_out_of_window_rst_ignored)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	tp_send_at(&t, 1001 + 0x40000000U, RST, NULL, 0);
	tp_send_at(&t, 1000, RST, NULL, 0); /* just below RCV.NXT */
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_closed, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_rst_ignored, 2);
	done(&h, &t);
}

/* RFC 5961 4.2: a SYN in a synchronized state (any sequence number) -> challenge ACK, connection kept */
TEST(rfc5961_4_2_syn_in_established_challenge_ack)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	tp_send_at(&t, 1001, SYN, NULL, 0);	/* in window */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	tp_send_at(&t, 5, SYN, NULL, 0);	/* out of window */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_closed, 0);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_ESTABLISHED);
	done(&h, &t);
}

/* RFC 5961 7: challenge ACKs are limited to IIP_CONF_TCP_CHALLENGE_ACK_LIMIT per second */
TEST(rfc5961_7_challenge_ack_rate_limit)
{
	struct th_host h;
	struct tp t;
	uint32_t i, sent = 0;
	open_conn(&h, &t);
	for (i = 0; i < IIP_CONF_TCP_CHALLENGE_ACK_LIMIT + 10; i++) {
		tp_send_at(&t, 1001 + 10 + i, RST, NULL, 0);
		sent += th_out_count(&h);
		tp_drain(&t);
	}
	CHECK_EQ(sent, IIP_CONF_TCP_CHALLENGE_ACK_LIMIT);
	CHECK_EQ(th_stats(&h).rx_tcp_challenge_ack_limited, 10);
	/* the next second allows more */
	th_advance_ms(&h, 1000);
	tp_drain(&t);
	tp_send_at(&t, 1001 + 5, RST, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(h.n_closed, 0);
	done(&h, &t);
}

/* RFC 5961 5.2: an ACK below SND.UNA - MAX.SND.WND -> challenge ACK, segment (with its data) dropped */
TEST(rfc5961_5_2_ack_too_old_challenge_ack)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	t.rcv = t.iss + 1 - 70000;
	tp_send_pat(&t, 1001, 10, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(h.rx_len, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_challenge_ack, 1);
	/* an old ACK inside [SND.UNA - MAX.SND.WND, SND.UNA] is fine: data accepted */
	t.rcv = t.iss + 1 - 1000;
	tp_send_pat(&t, 1001, 10, ACK);
	CHECK_EQ(h.rx_len, 10);
	done(&h, &t);
}

/* RFC 9293 3.10.7.4 fifth step: SEG.ACK > SND.NXT -> send an ACK, drop the segment */
TEST(rfc9293_3_10_7_4_ack_of_unsent_data_dropped)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	t.rcv = t.iss + 1 + 500;
	tp_send_pat(&t, 1001, 10, ACK);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(h.rx_len, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_bad_ack, 1);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 9293 3.10.7.4 first step: unacceptable segments (old duplicate, beyond the window) are ACKed and dropped */
TEST(rfc9293_3_10_7_4_unacceptable_segment_acked)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	tp_send_pat(&t, 1001, 100, ACK);
	th_advance_ms(&h, 50);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1101);
	tp_send_pat(&t, 1001, 100, ACK);	/* wholly old */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1101);
	tp_send_pat(&t, 1101 + 0x20000000U, 10, ACK); /* far beyond */
	EXPECT_SEG(&t, ACK, t.iss + 1, 1101);
	CHECK_EQ(h.rx_len, 100);
	CHECK(th_stats(&h).rx_tcp_bad_seq + th_stats(&h).rx_tcp_dup >= 2);
	done(&h, &t);
}

/* a RST resets in the closing states too (FIN-WAIT-2, CLOSE-WAIT) */
TEST(rfc9293_3_10_7_4_rst_in_fin_wait_2_and_close_wait)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	tp_send_at(&t, 1001, RST, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	done(&h, &t);

	open_conn(&h, &t);
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1002);
	tp_send_at(&t, 1002, RST | ACK, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	done(&h, &t);
}

/* RFC 9293 3.10.7.4 second step, TIME-WAIT: a RST (at RCV.NXT) deletes the TCB; the app, already told at
 * TIME-WAIT, is not told twice (RFC 1337's alternative, ignoring it, is not what RFC 9293 specifies) */
TEST(rfc9293_3_10_7_4_time_wait_rst_releases_once)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	t.rcv = t.iss + 2;
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1002);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 63);
	tp_send_at(&t, 1002, RST, NULL, 0);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	CHECK_EQ(h.n_closed, 1);
	EXPECT_NONE(&t);
	done(&h, &t);
}

/* RFC 5961 3.2 in SYN-RECEIVED: an in-window RST that is not exact gets a challenge ACK, the half-open
 * connection stays; RFC 9293 3.10.7.4: an unacceptable segment is ACKed there too */
TEST(rfc5961_3_2_syn_received_challenge_ack)
{
	struct th_host h;
	struct tp t;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	tp_send_at(&t, 1000, SYN, NULL, 0);
	CHECK(tp_pop(&t));
	t.iss = t.p.seq;
	tp_send_at(&t, 1001 + 100, RST, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 63);
	t.rcv = t.iss + 1;
	tp_send_at(&t, 1001 + 0x10000000U, ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1001);
	EXPECT_NONE(&t);
	/* the handshake still completes */
	tp_send_at(&t, 1001, ACK, NULL, 0);
	CHECK_EQ(h.n_accepted, 1);
	done(&h, &t);
}

int main(void)
{
	RUN(rfc5961_3_2_exact_rst_resets);
	RUN(rfc5961_3_2_in_window_rst_challenge_ack);
	RUN(rfc5961_3_2_out_of_window_rst_ignored);
	RUN(rfc5961_3_2_syn_received_challenge_ack);
	RUN(rfc5961_4_2_syn_in_established_challenge_ack);
	RUN(rfc5961_7_challenge_ack_rate_limit);
	RUN(rfc5961_5_2_ack_too_old_challenge_ack);
	RUN(rfc9293_3_10_7_4_ack_of_unsent_data_dropped);
	RUN(rfc9293_3_10_7_4_unacceptable_segment_acked);
	RUN(rfc9293_3_10_7_4_rst_in_fin_wait_2_and_close_wait);
	RUN(rfc9293_3_10_7_4_time_wait_rst_releases_once);
	TH_SUMMARY();
}
