/* TCP connection release: RFC 9293 3.6 (close, half-close, CLOSING, LAST-ACK, TIME-WAIT). */
#include "tcp_helpers.h"

static struct iip_workspace *WS(struct th_host *h) { return (struct iip_workspace *) h->ws; }

/* RFC 9293 3.6 case 1: active close: FIN-WAIT-1 -> FIN-WAIT-2 -> TIME-WAIT; closed reported at TIME-WAIT,
 * the object kept 2 MSL and then released */
TEST(rfc9293_3_6_active_close_time_wait_2msl)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_FIN_WAIT_1);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), IIP_ERR_STATE); /* twice */
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_NONE(&t);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_FIN_WAIT_2);
	CHECK_EQ(h.n_closed, 0);
	/* data received in FIN-WAIT-2 is still delivered (half-close) */
	tp_send_pat(&t, t.snd, 10, ACK | PSH);
	CHECK_EQ(h.rx_len, 10);
	CHECK(pat_check(h.rx_data, 0, 10));
	th_advance_ms(&h, IIP_CONF_TCP_DELAYED_ACK_MS);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1011);
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1012); /* a FIN is acknowledged at once */
	CHECK(h.fin_seen);
	CHECK_EQ(h.n_closed, 1);
	CHECK(h.closed_opaque == (void *) &h);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 63); /* TIME-WAIT holds the object */
	/* a retransmitted FIN in TIME-WAIT is acknowledged and restarts 2 MSL */
	th_advance_ms(&h, 2 * IIP_CONF_TCP_MSL_MS - 1000);
	tp_send_at(&t, 1011, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1012);
	th_advance_ms(&h, 2 * IIP_CONF_TCP_MSL_MS - 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 63);
	th_advance_ms(&h, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	CHECK_EQ(h.n_closed, 1);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.4 seventh step: data received in FIN-WAIT-1 is delivered */
TEST(rfc9293_3_10_7_4_data_in_fin_wait_1_delivered)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	/* the peer has not seen our FIN yet: acknowledges only the SYN */
	tp_send_pat(&t, 1001, 20, ACK);
	tp_send_pat(&t, 1021, 20, ACK);
	CHECK_EQ(h.rx_len, 40);
	CHECK(pat_check(h.rx_data, 0, 40));
	EXPECT_SEG(&t, ACK, t.iss + 2, 1041); /* second segment: ACK now */
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_FIN_WAIT_1);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.6 case 2: passive close: peer FIN reported as a payload call with FIN, CLOSE-WAIT keeps
 * sending, close -> LAST-ACK -> ACK of the FIN -> closed and released */
TEST(rfc9293_3_6_passive_close_close_wait_last_ack)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t payload_before;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	payload_before = h.n_payload;
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 1, 1002);
	CHECK(h.fin_seen);
	CHECK_EQ(h.n_payload, payload_before + 1);
	CHECK_EQ(h.rx_len, 0);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_CLOSE_WAIT);
	CHECK_EQ(h.n_closed, 0);
	/* half-close: we still send in CLOSE-WAIT */
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1002);
	CHECK_EQ(t.p.payload_len, 100);
	CHECK(pat_check(t.p.payload, 0, 100));
	t.rcv = t.iss + 101;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, 1);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 101, 1002);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_LAST_ACK);
	CHECK_EQ(th_app_send_pat(&h, t.c, 100, 10), IIP_ERR_STATE); /* nothing after our FIN */
	t.rcv = t.iss + 102;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* a FIN carrying data: the payload call has the data and the FIN flag */
TEST(rfc9293_3_10_7_4_fin_with_data)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	tp_send_pat(&t, 1001, 30, ACK | FIN | PSH);
	t.snd++;
	EXPECT_SEG(&t, ACK, t.iss + 1, 1032);
	CHECK_EQ(h.rx_len, 30);
	CHECK(h.fin_seen);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_CLOSE_WAIT);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.6 case 3: simultaneous close: FIN in FIN-WAIT-1 -> CLOSING; ACK of our FIN -> TIME-WAIT */
TEST(rfc9293_3_6_simultaneous_close_closing)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	/* the peer's FIN crosses ours: it acknowledges only our SYN */
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1002);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_CLOSING);
	CHECK_EQ(h.n_closed, 0);
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_TIME_WAIT);
	CHECK_EQ(h.n_closed, 1);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 2 * IIP_CONF_TCP_MSL_MS);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	tp_fini(&t);
	th_host_fini(&h);
}

/* FIN with the ACK of our FIN in FIN-WAIT-1: straight to TIME-WAIT */
TEST(rfc9293_3_10_7_4_fin_wait_1_fin_ack_to_time_wait)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	t.rcv = t.iss + 2;
	tp_send(&t, FIN | ACK, NULL, 0);
	EXPECT_SEG(&t, ACK, t.iss + 2, 1002);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_TIME_WAIT);
	CHECK_EQ(h.n_closed, 1);
	tp_fini(&t);
	th_host_fini(&h);
}

/* FIN-WAIT-2 whose peer never closes: released after IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS, app told */
TEST(fin_wait_2_timeout)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	th_advance_ms(&h, IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS - 1);
	CHECK_EQ(h.n_closed, 0);
	th_advance_ms(&h, 1);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* close with data queued: the FIN follows the data (on the last segment) */
TEST(rfc9293_3_10_4_close_after_queued_data)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	t.win = 0;
	tp_send(&t, ACK, NULL, 0); /* the peer's window is closed: data waits */
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 50), 0);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_NONE(&t);
	t.win = 65535;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_SEG(&t, ACK | PSH | FIN, t.iss + 1, 1001);
	CHECK_EQ(t.p.payload_len, 50);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* RFC 9293 3.10.7.4: the FIN retransmitted by the RTO when unacknowledged */
TEST(rfc6298_fin_retransmitted)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	th_advance_ms(&h, tp_conn(&t)->rto_ms);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);
}

/* data and FIN lost together: the RTO resends the data with the FIN on its last segment; a fast retransmit
 * (third duplicate ACK) of the last segment carries the FIN too */
TEST(rfc9293_3_10_4_fin_retransmitted_with_data)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t i;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 300), 0);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, ACK | PSH, t.iss + 1, 1001);
	EXPECT_SEG(&t, ACK | FIN, t.iss + 301, 1001);
	th_advance_ms(&h, tp_conn(&t)->rto_ms);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.seq, t.iss + 1);
	CHECK_EQ(t.p.payload_len, 300);
	CHECK(t.p.flags & FIN);
	EXPECT_NONE(&t);
	tp_fini(&t);
	th_host_fini(&h);

	/* fast retransmit of the last segment with the FIN */
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	for (i = 0; i < 5; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * 1460, 1460), 0);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	tp_drain(&t);
	t.rcv = t.iss + 1 + 4 * 1460; /* the last data segment and the FIN are missing */
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.seq, t.iss + 1 + 4 * 1460);
	CHECK_EQ(t.p.payload_len, 1460);
	CHECK(t.p.flags & FIN);
	t.rcv = t.iss + 1 + 5 * 1460 + 1;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(tp_conn(&t)->state, IIP_TCP_STATE_FIN_WAIT_2);
	CHECK_EQ(h.n_acked, 5);
	tp_fini(&t);
	th_host_fini(&h);
}

/* the FIN-WAIT-2 timeout is for peers that vanished: one still sending (half-close) is not cut off */
TEST(fin_wait_2_timeout_not_while_peer_sends)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t i;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	EXPECT_SEG(&t, FIN | ACK, t.iss + 1, 1001);
	t.rcv = t.iss + 2;
	tp_send(&t, ACK, NULL, 0);
	for (i = 0; i < 6; i++) {
		th_advance_ms(&h, IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS / 2);
		tp_send_pat(&t, 1001 + i * 10, 10, ACK);
	}
	CHECK_EQ(h.n_closed, 0);
	CHECK_EQ(h.rx_len, 60);
	CHECK(pat_check(h.rx_data, 0, 60));
	th_advance_ms(&h, IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS);
	CHECK_EQ(h.n_closed, 1);
	tp_fini(&t);
	th_host_fini(&h);
}

/* LAST-ACK with a vanished peer: the FIN is retransmitted with backoff, then the connection is aborted and
 * the app told once (RFC 1122 4.2.3.5) */
TEST(rfc1122_4_2_3_5_last_ack_peer_gone)
{
	struct th_host h;
	struct tp t;
	struct tp_synopts so = tp_synopts_none();
	uint32_t i, fins = 0;
	th_host_init(&h);
	tp_init(&t, &h);
	tp_passive_open(&t, &so);
	tp_send(&t, FIN | ACK, NULL, 0);
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	tp_drain(&t);
	for (i = 0; i < 1000 && !h.n_closed; i++) {
		th_advance_ms(&h, 1000);
		while (tp_pop(&t))
			if (t.p.flags & FIN) {
				CHECK_EQ(t.p.seq, t.iss + 1);
				fins++;
			}
	}
	CHECK_EQ(fins, IIP_CONF_TCP_RETRIES_MAX);
	CHECK_EQ(h.n_closed, 1);
	CHECK_EQ(((struct iip_workspace *) h.ws)->conn_pool_cnt, 64);
	tp_fini(&t);
	th_host_fini(&h);
}

int main(void)
{
	RUN(rfc9293_3_6_active_close_time_wait_2msl);
	RUN(rfc9293_3_10_7_4_data_in_fin_wait_1_delivered);
	RUN(rfc9293_3_6_passive_close_close_wait_last_ack);
	RUN(rfc9293_3_10_7_4_fin_with_data);
	RUN(rfc9293_3_6_simultaneous_close_closing);
	RUN(rfc9293_3_10_7_4_fin_wait_1_fin_ack_to_time_wait);
	RUN(fin_wait_2_timeout);
	RUN(fin_wait_2_timeout_not_while_peer_sends);
	RUN(rfc1122_4_2_3_5_last_ack_peer_gone);
	RUN(rfc9293_3_10_4_close_after_queued_data);
	RUN(rfc6298_fin_retransmitted);
	RUN(rfc9293_3_10_4_fin_retransmitted_with_data);
	TH_SUMMARY();
}
