/* Smoke tests: one exchange per protocol, end to end through iip_run. */
#include "harness.h"

TEST(arp_request_for_us_is_answered)
{
	struct th_host h;
	uint8_t f[64];
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	memset(f, 0, sizeof(f));
	n = th_eth(f, (const uint8_t *) "\xff\xff\xff\xff\xff\xff", th_mac_peer, 0x0806);
	put16_(f + n, 1); put16_(f + n + 2, 0x0800); f[n + 4] = 6; f[n + 5] = 4; put16_(f + n + 6, 1);
	memcpy(f + n + 8, th_mac_peer, 6); put32_(f + n + 14, TH_IP_PEER);
	memset(f + n + 18, 0, 6); put32_(f + n + 24, TH_IP_SELF);
	th_run(&h, f, 60);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		CHECK_EQ(be16_(o->data + 12), 0x0806);
		CHECK_EQ(be16_(o->data + 14 + 6), 2);
		CHECK(!memcmp(o->data, th_mac_peer, 6));
		CHECK(!memcmp(o->data + 14 + 8, th_mac_self, 6));
		CHECK_EQ(be32_(o->data + 14 + 14), TH_IP_SELF);
		CHECK(!memcmp(o->data + 14 + 18, th_mac_peer, 6));
		CHECK_EQ(be32_(o->data + 14 + 24), TH_IP_PEER);
		free(o);
	}
	th_host_fini(&h);
}

TEST(tcp_passive_open_data_and_close)
{
	struct th_host h;
	struct th_seg s = th_seg_default();
	struct th_frame *o;
	struct th_parsed p;
	uint32_t iss;
	th_host_init(&h);
	h.accept_ports[80 >> 3] |= 1 << (80 & 7);
	s.flags = IIP_TCP_FLAG_SYN;
	s.seq = 1000;
	th_send_seg(&h, &s);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (!o) { th_host_fini(&h); return; }
	th_parse(o, &p);
	CHECK_EQ(p.flags, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK);
	CHECK_EQ(p.ack, 1001);
	CHECK(p.l4_csum_ok);
	CHECK(p.ip_csum_ok);
	CHECK(p.has_mss);
	CHECK(!p.has_ws && !p.has_ts && !p.has_sackp); /* not offered by the peer: not sent */
	iss = p.seq;
	free(o);
	s.flags = IIP_TCP_FLAG_ACK;
	s.seq = 1001;
	s.ack = iss + 1;
	s.payload = (const uint8_t *) "hello";
	s.payload_len = 5;
	th_send_seg(&h, &s);
	CHECK_EQ(h.n_accepted, 1);
	CHECK_EQ(h.rx_len, 5);
	CHECK(!memcmp(h.rx_data, "hello", 5));
	/* one segment: the ACK is delayed */
	CHECK_EQ(th_out_count(&h), 0);
	th_advance_ms(&h, 50);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		th_parse(o, &p);
		CHECK_EQ(p.flags, IIP_TCP_FLAG_ACK);
		CHECK_EQ(p.ack, 1006);
		free(o);
	}
	/* peer closes */
	s.payload_len = 0;
	s.seq = 1006;
	s.flags = IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN;
	th_send_seg(&h, &s);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		th_parse(o, &p);
		CHECK_EQ(p.ack, 1007);
		free(o);
	}
	CHECK(h.fin_seen);
	CHECK(h.handle != NULL);
	if (h.handle)
		CHECK_EQ(iip_tcp_close(h.ws, h.handle, h.opaque), 0);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		th_parse(o, &p);
		CHECK_EQ(p.flags, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN);
		CHECK_EQ(p.seq, iss + 1);
		free(o);
	}
	s.flags = IIP_TCP_FLAG_ACK;
	s.seq = 1007;
	s.ack = iss + 2;
	th_send_seg(&h, &s);
	CHECK_EQ(h.n_closed, 1);
	th_host_fini(&h);
}

int main(void)
{
	RUN(arp_request_for_us_is_answered);
	RUN(tcp_passive_open_data_and_close);
	TH_SUMMARY();
}
