/* The TCP API's edges: iip_tcp_send refusals, allocation failures, pool exhaustion, keepalive (RFC 1122
 * 4.2.3.6), ICMP fragmentation needed (RFC 1191, RFC 5927). A small send queue makes "queue full" reachable. */
#define IIP_CONF_TCP_TX_QUEUE_PKTS (16)
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

/* iip_tcp_send: each refusal leaves the packet to the caller (freed here: the leak check proves the stack kept
 * no reference) and changes nothing */
TEST(api_send_refusals_leave_packet_to_caller)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	struct th_pkt *p;
	open_conn(&h, &t);
	/* no connection (design rule 4: bad input from the integrator never crashes) */
	CHECK_EQ(th_app_send_pat(&h, NULL, 0, 10), IIP_ERR_STATE);
	/* empty packet */
	p = th_pkt_new();
	p->len = 0;
	CHECK_EQ(iip_tcp_send(h.ws, t.c, p, 0, h.opaque), IIP_ERR_INVALID);
	th_pkt_free(p);
	/* chained packet */
	p = th_pkt_new();
	p->len = 10;
	p->next = th_pkt_new();
	p->next->len = 10;
	CHECK_EQ(iip_tcp_send(h.ws, t.c, p, 0, h.opaque), IIP_ERR_INVALID);
	th_pkt_free(p);
	/* queue full: the peer's window is closed, IIP_CONF_TCP_TX_QUEUE_PKTS accepted, then refused */
	t.win = 0;
	tp_send(&t, ACK, NULL, 0);
	for (i = 0; i < IIP_CONF_TCP_TX_QUEUE_PKTS; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * 10, 10), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 1000, 10), IIP_ERR_QUEUE_FULL);
	CHECK_EQ(th_stats(&h).tx_tcp_refused, 4);
	/* after close: wrong state */
	CHECK_EQ(iip_tcp_close(h.ws, t.c, h.opaque), 0);
	CHECK_EQ(th_app_send_pat(&h, t.c, 1000, 10), IIP_ERR_STATE);
	tp_drain(&t);
	done(&h, &t);
}

/* iip_tcp_send with no packet wrapper left: IIP_ERR_NOMEM, packet still the caller's */
TEST(api_send_no_pb_nomem)
{
	struct th_host h;
	struct tp t;
	struct iip_pb *saved;
	uint32_t saved_cnt;
	open_conn(&h, &t);
	/* take every wrapper away from the pool for the call */
	saved = WS(&h)->pb_pool.head;
	saved_cnt = WS(&h)->pb_pool.cnt;
	WS(&h)->pb_pool.head = WS(&h)->pb_pool.tail = NULL;
	WS(&h)->pb_pool.cnt = 0;
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), IIP_ERR_NOMEM);
	/* out-of-order data with no wrapper: dropped and counted, no crash */
	tp_send_pat(&t, 1101, 10, ACK);
	CHECK_EQ(th_stats(&h).rx_tcp_ooo_dropped, 1);
	WS(&h)->pb_pool.head = saved;
	WS(&h)->pb_pool.cnt = saved_cnt;
	{
		struct iip_pb *pb = saved;
		while (pb && pb->next)
			pb = pb->next;
		WS(&h)->pb_pool.tail = pb;
	}
	tp_drain(&t);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 10), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.payload_len, 10);
	done(&h, &t);
}

/* the integrator's allocator failing: nothing is sent, nothing leaks, the data goes out by the RTO later */
TEST(api_alloc_failure_recovers_by_retransmission)
{
	struct th_host h;
	struct tp t;
	open_conn(&h, &t);
	h.alloc_fail = 1;
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 100), 0);
	EXPECT_NONE(&t);
	CHECK(th_stats(&h).pkt_alloc_failed >= 1);
	h.alloc_fail = 0;
	th_advance_ms(&h, 1000);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.p.seq, t.iss + 1);
	CHECK_EQ(t.p.payload_len, 100);
	CHECK(pat_check(t.p.payload, 0, 100));
	done(&h, &t);
}

/* connection pool exhausted: SYNs get cookies (test_tcp_listen), connect returns IIP_ERR_NOMEM, no crash */
TEST(api_connect_pool_exhausted)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	for (i = 0; i < 64; i++)
		CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_((uint16_t) (1000 + i)), peer_mac, htonl_(TH_IP_PEER), htons_(80), h.opaque), 0);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(2000), peer_mac, htonl_(TH_IP_PEER), htons_(80), h.opaque), IIP_ERR_NOMEM);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, 0, peer_mac, htonl_(TH_IP_PEER), htons_(80), h.opaque), IIP_ERR_INVALID);
	CHECK_EQ(th_out_count(&h), 64);
	tp_drain(&t);
	done(&h, &t);
}

/* RFC 1122 4.2.3.6: keepalive: after the idle time a probe <SEQ=SND.NXT-1> with no data; an answer resets it;
 * unanswered probes abort the connection */
TEST(rfc1122_4_2_3_6_keepalive)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	open_conn(&h, &t);
	iip_tcp_set_keepalive(h.ws, t.c, 1, 1000, 100, 3);
	th_advance_ms(&h, 999);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, ACK, t.iss, 1001);
	CHECK_EQ(t.p.payload_len, 0);
	tp_send(&t, ACK, NULL, 0); /* the peer answers */
	EXPECT_NONE(&t);
	th_advance_ms(&h, 999);
	EXPECT_NONE(&t);
	th_advance_ms(&h, 1);
	EXPECT_SEG(&t, ACK, t.iss, 1001);
	for (i = 0; i < 2; i++) {
		th_advance_ms(&h, 99);
		EXPECT_NONE(&t);
		th_advance_ms(&h, 1);
		EXPECT_SEG(&t, ACK, t.iss, 1001);
	}
	CHECK_EQ(h.n_closed, 0);
	th_advance_ms(&h, 100);
	CHECK_EQ(h.n_closed, 1);
	CHECK(tp_pop(&t));
	CHECK(t.p.flags & RST);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	CHECK_EQ(th_stats(&h).tx_tcp_keepalive, 4);
	done(&h, &t);
}

/* keepalive off by default: an idle connection stays silent for hours */
TEST(rfc1122_4_2_3_6_keepalive_off_by_default)
{
	struct th_host h;
	struct tp t;
	uint32_t i;
	open_conn(&h, &t);
	for (i = 0; i < 30; i++)
		th_advance_ms(&h, 600000);
	EXPECT_NONE(&t);
	CHECK_EQ(h.n_closed, 0);
	done(&h, &t);
}

/* RFC 1191 / RFC 5927: ICMP fragmentation needed lowers the MSS only when it quotes a sequence number in flight;
 * the segment is resent at the new size */
TEST(rfc1191_icmp_frag_needed_in_flight_only)
{
	struct th_host h;
	struct tp t;
	uint8_t inner[28], icmp[64], f[128];
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	open_conn(&h, &t);
	iip_tcp_set_nodelay(h.ws, t.c, 1);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 1460), 0);
	CHECK(tp_pop(&t));
	memcpy(inner, t.p.ip, 28);
	/* a quoted sequence number not in flight: ignored */
	put32_(inner + 24, t.iss + 100000);
	n = th_icmp(icmp, 3, 4, 0, 1000, inner, 28);
	th_run(&h, f, th_build_ip4(f, &d, icmp, n));
	CHECK_EQ(tp_conn(&t)->snd_mss, 1460);
	EXPECT_NONE(&t);
	/* an implausible MTU: ignored */
	put32_(inner + 24, t.iss + 1);
	n = th_icmp(icmp, 3, 4, 0, 100, inner, 28);
	th_run(&h, f, th_build_ip4(f, &d, icmp, n));
	CHECK_EQ(tp_conn(&t)->snd_mss, 1460);
	/* in flight: MSS = 1000 - 40, resent */
	n = th_icmp(icmp, 3, 4, 0, 1000, inner, 28);
	th_run(&h, f, th_build_ip4(f, &d, icmp, n));
	CHECK_EQ(tp_conn(&t)->snd_mss, 960);
	CHECK_EQ(th_stats(&h).tcp_icmp_mtu, 1);
	EXPECT_DATA(&t, t.iss + 1, 1001, 960);
	CHECK(t.p.ip_len <= 1000);
	EXPECT_DATA(&t, t.iss + 1 + 960, 1001, 500);
	EXPECT_NONE(&t);
	/* other unreachable codes are soft errors: the connection stays */
	n = th_icmp(icmp, 3, 1, 0, 0, inner, 28);
	th_run(&h, f, th_build_ip4(f, &d, icmp, n));
	CHECK_EQ(h.n_closed, 0);
	done(&h, &t);
}

/* iip_tcp_close on a connection in SYN-SENT: released, app told (closed with NULL tcp_opaque) */
TEST(api_close_in_syn_sent)
{
	struct th_host h;
	struct tp t;
	uint8_t peer_mac[6] = TH_MAC_PEER;
	struct iip_tcp_conn *c;
	th_host_init(&h);
	th_advance_ms(&h, 1);
	tp_init(&t, &h);
	CHECK_EQ(iip_tcp_connect(h.ws, h.mac, h.ip_be, htons_(80), peer_mac, htonl_(TH_IP_PEER), htons_(40000), h.opaque), 0);
	c = WS(&h)->conn_all;
	CHECK(c != NULL);
	CHECK_EQ(iip_tcp_close(h.ws, c, h.opaque), 0);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64);
	CHECK_EQ(h.n_closed, 1);
	tp_drain(&t);
	done(&h, &t);
}

int main(void)
{
	RUN(api_send_refusals_leave_packet_to_caller);
	RUN(api_send_no_pb_nomem);
	RUN(api_alloc_failure_recovers_by_retransmission);
	RUN(api_connect_pool_exhausted);
	RUN(rfc1122_4_2_3_6_keepalive);
	RUN(rfc1122_4_2_3_6_keepalive_off_by_default);
	RUN(rfc1191_icmp_frag_needed_in_flight_only);
	RUN(api_close_in_syn_sent);
	TH_SUMMARY();
}
