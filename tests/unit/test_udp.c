/*
 * UDP (RFC 768, RFC 1122 4.1) at the packet level: what is delivered, what
 * is dropped and counted, ports (iip_udp_port_open and ICMP port
 * unreachable), and every path of iip_udp_send (copy, scatter-gather,
 * checksum offload, fragmentation, refusals).
 */
#include "harness.h"
#include "l3_checks.h"

static uint8_t frame[TH_BUF_SIZE];

#define LOCAL_PORT 5000
#define PEER_PORT 4000

/* A frame with a UDP datagram peer:4000 -> self:dport carrying payload. */
static uint32_t build_udp(uint8_t *f, uint16_t dport, const uint8_t *payload, uint32_t len)
{
	static uint8_t u[TH_BUF_SIZE];
	struct th_ip d = th_ip_default(17);
	uint32_t n = th_udp(u, TH_IP_PEER, TH_IP_SELF, PEER_PORT, dport, payload, len);
	return th_build_ip4(f, &d, u, n);
}

/* Offset of the UDP header in frames built above. */
#define UDP_AT (14 + 20)

static void expect_delivered(struct th_host *h, uint32_t n_udp, const uint8_t *payload, uint32_t len)
{
	CHECK_EQ(h->n_udp, n_udp);
	CHECK_EQ(h->last_udp_len, len);
	if (h->last_udp_len == len && len)
		CHECK(!memcmp(h->last_udp, payload, len));
}

/* RFC 768: a valid datagram reaches the application with its data intact. */
TEST(udp_datagram_is_delivered_with_payload_intact)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[101];
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 1);
	th_run(&h, frame, build_udp(frame, LOCAL_PORT, payload, sizeof(payload)));
	expect_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp, 1);
	CHECK_EQ(th_stats(&h).rx_udp_malformed + th_stats(&h).rx_udp_bad_csum, 0);
	th_host_fini(&h);
}

/* RFC 768: "An all zero transmitted checksum value means that the
 * transmitter generated no checksum"; RFC 1122 4.1.3.4 accepts it. */
TEST(udp_zero_checksum_is_accepted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[20];
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 2);
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	put16_(frame + UDP_AT + 6, 0);
	th_run(&h, frame, n);
	expect_delivered(&h, 1, payload, sizeof(payload));
	th_host_fini(&h);
}

/* RFC 1122 4.1.3.4: a datagram with a bad checksum MUST be discarded silently. */
TEST(udp_bad_checksum_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[20];
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 3);
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	frame[n - 3] ^= 0x40;
	th_run(&h, frame, n);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 1);
	/* the checksum covers the pseudo header: a datagram moved to another
	 * port pair keeps its sum and fails */
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	put16_(frame + UDP_AT, PEER_PORT + 1);
	th_run(&h, frame, n);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 2);
	th_host_fini(&h);
}

/* With receive checksum offload the NIC's verdict decides: a datagram it
 * flags bad is dropped, one it passes is delivered without a second check. */
TEST(udp_bad_checksum_flagged_by_the_nic_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[20];
	struct th_pkt *p;
	uint32_t n;
	th_host_init(&h);
	h.f_udp_rx_csum = 1;
	fill_pattern(payload, sizeof(payload), 4);
	p = th_pkt_from(frame, build_udp(frame, LOCAL_PORT, payload, sizeof(payload)));
	p->rx_csum_bad = 1;
	th_run_pkt(&h, p);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 1);
	CHECK_EQ(th_out_count(&h), 0);
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	frame[UDP_AT + 6] ^= 0x01; /* the NIC said good: the stack does not recompute */
	th_run(&h, frame, n);
	expect_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 1);
	th_host_fini(&h);
}

/* RFC 768: the length field counts header and data; more than the IP
 * payload holds means a truncated datagram. */
TEST(udp_length_beyond_the_ip_payload_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[20];
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 5);
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	put16_(frame + UDP_AT + 4, 8 + sizeof(payload) + 1);
	th_run(&h, frame, n);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_malformed, 1);
	th_host_fini(&h);
}

/* RFC 768: "the minimum value of the length is eight". */
TEST(udp_length_below_8_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[20];
	uint32_t n, len;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 6);
	for (len = 0; len < 8; len++) {
		n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
		put16_(frame + UDP_AT + 4, (uint16_t) len);
		th_run(&h, frame, n);
	}
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_malformed, 8);
	th_host_fini(&h);
}

/* An IP payload too short for the 8-byte header. */
TEST(udp_shorter_than_its_header_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(17);
	uint8_t u[8] = { 0x0f, 0xa0, 0x13, 0x88, 0, 6, 0, 0 };
	th_host_init(&h);
	th_run(&h, frame, th_build_ip4(frame, &d, u, 6));
	th_run(&h, frame, th_build_ip4(frame, &d, u, 0));
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_malformed, 2);
	th_host_fini(&h);
}

/* RFC 768 / RFC 1122 4.1.3.4: the UDP length, not the IP length, bounds
 * the datagram; trailing bytes in the IP payload are not data (and not in
 * the checksum). */
TEST(udp_length_below_the_ip_payload_uses_the_udp_length)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(17);
	uint8_t payload[10], u[64];
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 7);
	n = th_udp(u, TH_IP_PEER, TH_IP_SELF, PEER_PORT, LOCAL_PORT, payload, sizeof(payload));
	memcpy(u + n, "TRAIL!", 6);
	th_run(&h, frame, th_build_ip4(frame, &d, u, n + 6));
	expect_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_udp_malformed + th_stats(&h).rx_udp_bad_csum, 0);
	th_host_fini(&h);
}

/* Until the application declares a port, every port is delivered
 * (iip_udp_port_open documents this compatibility default). */
TEST(udp_every_port_is_delivered_until_ports_are_declared)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[4] = { 1, 2, 3, 4 };
	th_host_init(&h);
	th_run(&h, frame, build_udp(frame, 9, payload, 4));
	th_run(&h, frame, build_udp(frame, 65535, payload, 4));
	expect_delivered(&h, 2, payload, 4);
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

/* RFC 1122 4.1.3.1: a datagram for a port with no listener SHOULD get an
 * ICMP port unreachable, quoting the datagram (RFC 792). */
TEST(udp_closed_port_gets_port_unreachable)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[30];
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	iip_udp_port_open(h.ws, htons_(LOCAL_PORT), 1);
	fill_pattern(payload, sizeof(payload), 8);
	n = build_udp(frame, 9, payload, sizeof(payload));
	th_run(&h, frame, n);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 3, frame + 14, n - 14);
		free(o);
	}
	CHECK_EQ(th_stats(&h).rx_udp_port_closed, 1);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 1);
	th_host_fini(&h);
}

/* iip_udp_port_open: an open port is delivered; closing it again makes it
 * answer port unreachable. */
TEST(udp_open_port_is_delivered_and_closing_it_answers_unreachable)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[12];
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 9);
	iip_udp_port_open(h.ws, htons_(LOCAL_PORT), 1);
	th_run(&h, frame, build_udp(frame, LOCAL_PORT, payload, sizeof(payload)));
	expect_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_out_count(&h), 0);
	iip_udp_port_open(h.ws, htons_(LOCAL_PORT), 0);
	n = build_udp(frame, LOCAL_PORT, payload, sizeof(payload));
	th_run(&h, frame, n);
	CHECK_EQ(h.n_udp, 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 3, frame + 14, n - 14);
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 1122 4.1.3.6 / 3.3.6: a host receives datagrams to the limited
 * broadcast address. */
TEST(udp_limited_broadcast_is_delivered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(17);
	uint8_t payload[8] = "dhcp-ish", u[64];
	uint32_t n;
	th_host_init(&h);
	d.dst = 0xffffffffU;
	n = th_udp(u, TH_IP_PEER, d.dst, 68, LOCAL_PORT, payload, sizeof(payload));
	n = th_build_ip4(frame, &d, u, n);
	memcpy(frame, th_mac_bcast, 6);
	th_run(&h, frame, n);
	expect_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

/* ---------- sending ---------- */

/* iip_udp_send of payload from self:5000 to peer:4000.  On refusal the
 * packet is still the caller's: free it, as an application would. */
static uint16_t send_udp(struct th_host *h, const uint8_t *payload, uint32_t len)
{
	struct th_pkt *p = th_pkt_new();
	uint8_t mac[6];
	uint16_t r;
	memcpy(mac, th_mac_peer, 6);
	memcpy(p->data, payload, len);
	p->len = (uint16_t) len;
	r = iip_udp_send(h->ws, h->mac, h->ip_be, htons_(LOCAL_PORT), mac, htonl_(TH_IP_PEER), htons_(PEER_PORT), p, h->opaque);
	if (r)
		th_pkt_free(p);
	return r;
}

/* An unfragmented datagram we sent: IP fields, ports, length, data, and a
 * checksum that verifies (non-zero: we always compute one, RFC 1122 4.1.3.4). */
static void check_udp_frame(const struct th_frame *o, const uint8_t *payload, uint32_t len)
{
	struct th_parsed p;
	const uint8_t *u;
	th_parse(o, &p);
	check_ip4_to_peer(o, &p, 17);
	if (p.proto != 17)
		return;
	u = p.ip + 20;
	CHECK_EQ(p.ip_len, 28 + len);
	CHECK_EQ(p.sport, LOCAL_PORT);
	CHECK_EQ(p.dport, PEER_PORT);
	CHECK_EQ(be16_(u + 4), 8 + len);
	CHECK(be16_(u + 6) != 0);
	if (!o->ol_udp_csum)
		CHECK_EQ(ref_l4_csum(p.ip, 17, u, 8 + len), 0);
	if (p.ip_len == 28 + len && len)
		CHECK(!memcmp(u + 8, payload, len));
}

/* Copy path (no scatter-gather): one linear frame, checksum in software. */
TEST(udp_send_copy_path_frame_is_correct)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[333];
	struct th_frame *o;
	th_host_init(&h);
	th_run(&h, NULL, 0);
	fill_pattern(payload, sizeof(payload), 10);
	CHECK_EQ(send_udp(&h, payload, sizeof(payload)), 0);
	CHECK_EQ(th_out_count(&h), 1);
	CHECK_EQ(h.flushes, 1); /* called outside iip_run: flushed at once */
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_udp_frame(o, payload, sizeof(payload));
		CHECK(!o->chained);
		CHECK(!o->ol_udp_csum && !o->ol_ip4_csum);
		free(o);
	}
	CHECK_EQ(th_stats(&h).tx_udp, 1);
	th_host_fini(&h);
}

/* Scatter-gather path (seed 001: zero-copy transmission): the header and
 * the application's payload are separate segments of a chain, and the frame
 * on the wire is byte for byte the copy path's. */
TEST(udp_send_scatter_gather_frame_is_identical_to_the_copy)
{
	static struct th_host a, b; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[333];
	struct th_frame *oa, *ob;
	th_host_init(&a);
	th_host_init(&b);
	b.f_sg = 1;
	th_run(&a, NULL, 0);
	th_run(&b, NULL, 0);
	fill_pattern(payload, sizeof(payload), 11);
	CHECK_EQ(send_udp(&a, payload, sizeof(payload)), 0);
	CHECK_EQ(send_udp(&b, payload, sizeof(payload)), 0);
	oa = th_pop(&a);
	ob = th_pop(&b);
	CHECK(oa != NULL && ob != NULL);
	if (oa && ob) {
		CHECK(!oa->chained);
		CHECK(ob->chained);
		CHECK_EQ(oa->len, ob->len);
		CHECK(oa->len == ob->len && !memcmp(oa->data, ob->data, oa->len));
		check_udp_frame(ob, payload, sizeof(payload));
	}
	free(oa);
	free(ob);
	th_host_fini(&a);
	th_host_fini(&b);
}

/* Checksum offload: the NIC computes the sum from the pseudo-header sum the
 * stack leaves in the field (the convention of Linux and DPDK), and the
 * packet is marked. */
TEST(udp_send_checksum_offload_leaves_the_pseudo_header_sum)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[64];
	struct th_frame *o;
	th_host_init(&h);
	h.f_udp_tx_csum = 1;
	th_run(&h, NULL, 0);
	fill_pattern(payload, sizeof(payload), 12);
	CHECK_EQ(send_udp(&h, payload, sizeof(payload)), 0);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		const uint8_t *ip = o->data + 14;
		uint32_t s = ref_sum(ip + 12, 8, 0) + 17 + 8 + sizeof(payload);
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		CHECK(o->ol_udp_csum);
		CHECK_EQ(be16_(ip + 20 + 6), s);
		check_udp_frame(o, payload, sizeof(payload));
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 768: "If the computed checksum is zero, it is transmitted as all
 * ones" (zero would mean "no checksum").  The payload's last word is chosen
 * so that the sum comes out zero. */
TEST(udp_send_computed_zero_checksum_is_sent_as_ffff)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[10], ip[20], u[18];
	struct th_frame *o;
	struct th_ip d = th_ip_default(17);
	uint16_t c0;
	th_host_init(&h);
	th_run(&h, NULL, 0);
	fill_pattern(payload, sizeof(payload), 13);
	payload[8] = payload[9] = 0;
	/* the reference sum with the last word zero is exactly the word that
	 * makes the one's complement sum 0xffff, i.e. the checksum 0 */
	d.src = TH_IP_SELF;
	d.dst = TH_IP_PEER;
	th_ip4(ip, &d, sizeof(u));
	put16_(u, LOCAL_PORT);
	put16_(u + 2, PEER_PORT);
	put16_(u + 4, sizeof(u));
	put16_(u + 6, 0);
	memcpy(u + 8, payload, sizeof(payload));
	c0 = ref_l4_csum(ip, 17, u, sizeof(u));
	put16_(payload + 8, c0);
	memcpy(u + 8, payload, sizeof(payload));
	CHECK_EQ(ref_l4_csum(ip, 17, u, sizeof(u)), 0);
	CHECK_EQ(send_udp(&h, payload, sizeof(payload)), 0);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		CHECK_EQ(be16_(o->data + 14 + 20 + 6), 0xffff);
		check_udp_frame(o, payload, sizeof(payload));
		free(o);
	}
	th_host_fini(&h);
}

/* Rebuilds the UDP datagram from the fragments h sent and checks it whole:
 * ports, length, checksum over the pseudo header, every payload byte. */
static void check_fragmented_send(struct th_host *h, const uint8_t *payload, uint32_t len, uint32_t expect_frags)
{
	static uint8_t l4[70000];
	uint8_t ip[20];
	struct th_ip d = th_ip_default(17);
	uint32_t nf = 0, n;
	n = collect_fragments(h, 17, 1500, l4, &nf);
	CHECK_EQ(nf, expect_frags);
	CHECK_EQ(n, 8 + len);
	if (n != 8 + len)
		return;
	d.src = TH_IP_SELF;
	d.dst = TH_IP_PEER;
	th_ip4(ip, &d, n);
	CHECK_EQ(be16_(l4), LOCAL_PORT);
	CHECK_EQ(be16_(l4 + 2), PEER_PORT);
	CHECK_EQ(be16_(l4 + 4), n);
	CHECK(be16_(l4 + 6) != 0);
	CHECK_EQ(ref_l4_csum(ip, 17, l4, n), 0);
	CHECK(!memcmp(l4 + 8, payload, len));
}

/* RFC 791 3.2 / RFC 1122 3.3.3: a datagram larger than the MTU is sent in
 * fragments: 1480 + 1480 + 48 bytes of the 3008-byte UDP datagram, on the
 * copy path, the scatter-gather path and with checksum offload available
 * (a fragmented datagram's sum is computed in software). */
TEST(udp_send_larger_than_the_mtu_is_fragmented)
{
	static uint8_t payload[3000];
	uint32_t mode;
	fill_pattern(payload, sizeof(payload), 14);
	for (mode = 0; mode < 3; mode++) {
		static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
		th_host_init(&h);
		h.f_sg = mode == 1;
		h.f_udp_tx_csum = mode == 2;
		th_run(&h, NULL, 0);
		CHECK_EQ(send_udp(&h, payload, sizeof(payload)), 0);
		CHECK_EQ(th_out_count(&h), 3);
		if (th_out_count(&h) == 3) {
			CHECK_EQ(h.out[h.out_head % TH_MAX_FRAMES]->len, 1514);
			CHECK_EQ(h.out[(h.out_head + 1) % TH_MAX_FRAMES]->len, 1514);
			CHECK_EQ(h.out[(h.out_head + 2) % TH_MAX_FRAMES]->len, 14 + 20 + 48);
			if (mode == 1)
				CHECK(h.out[(h.out_head + 1) % TH_MAX_FRAMES]->chained);
		}
		check_fragmented_send(&h, payload, sizeof(payload), 3);
		CHECK_EQ(th_stats(&h).tx_ip4_frags, 3);
		th_host_fini(&h);
	}
}

/* The largest UDP datagram (65507 bytes of data, 65535-byte IP datagram)
 * goes out in 45 fragments, and a receiving stack rebuilds it. */
TEST(udp_send_of_65507_bytes_reaches_a_receiving_stack)
{
	static uint8_t payload[65507];
	static struct th_host a, b; /* static: 1 MB each, too big for the stack once inlined */
	struct th_frame *o;
	uint32_t frames = 0;
	fill_pattern(payload, sizeof(payload), 15);
	th_host_init(&a);
	th_host_init(&b);
	memcpy(b.mac, th_mac_peer, 6);
	b.ip_be = htonl_(TH_IP_PEER);
	th_run(&a, NULL, 0);
	CHECK_EQ(send_udp(&a, payload, sizeof(payload)), 0);
	CHECK_EQ(th_out_count(&a), 45);
	while ((o = th_pop(&a)) != NULL) {
		th_run(&b, o->data, o->len);
		free(o);
		frames++;
	}
	CHECK_EQ(frames, 45);
	CHECK_EQ(th_stats(&b).rx_ip4_reassembled, 1);
	expect_delivered(&b, 1, payload, sizeof(payload));
	th_host_fini(&a);
	th_host_fini(&b);
}

/* Also checks the fragments themselves for the maximum size. */
TEST(udp_send_of_65507_bytes_is_fragmented_correctly)
{
	static uint8_t payload[65507];
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	fill_pattern(payload, sizeof(payload), 16);
	th_host_init(&h);
	h.f_sg = 1;
	th_run(&h, NULL, 0);
	CHECK_EQ(send_udp(&h, payload, sizeof(payload)), 0);
	check_fragmented_send(&h, payload, sizeof(payload), 45);
	th_host_fini(&h);
}

/* RFC 768 / RFC 791: 65507 data bytes is the limit; beyond it iip_udp_send
 * refuses, sends nothing, and the packet stays the caller's (send_udp frees
 * it: the leak check proves the stack did not). */
TEST(udp_send_beyond_65507_bytes_is_refused)
{
	static uint8_t payload[65535];
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	th_host_init(&h);
	th_run(&h, NULL, 0);
	CHECK(send_udp(&h, payload, 65508) != 0);
	CHECK(send_udp(&h, payload, 65535) != 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_udp_refused, 2);
	CHECK_EQ(th_stats(&h).tx_udp, 0);
	th_host_fini(&h);
}

/* No packet for the headers: refused, nothing sent, nothing leaked, on
 * both paths and for a fragmented datagram. */
TEST(udp_send_without_packets_is_refused)
{
	static uint8_t payload[3000];
	uint32_t sg;
	for (sg = 0; sg < 2; sg++) {
		static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
		th_host_init(&h);
		h.f_sg = (uint8_t) sg;
		th_run(&h, NULL, 0);
		h.alloc_fail = 1;
		CHECK(send_udp(&h, payload, 100) != 0);
		CHECK(send_udp(&h, payload, sizeof(payload)) != 0);
		h.alloc_fail = 0;
		CHECK_EQ(th_out_count(&h), 0);
		CHECK_EQ(th_stats(&h).tx_udp_refused, 2);
		CHECK_EQ(th_stats(&h).tx_udp, 0);
		/* and the stack works again afterwards */
		CHECK_EQ(send_udp(&h, payload, 100), 0);
		CHECK_EQ(th_out_count(&h), 1);
		th_host_fini(&h);
	}
}

/* A datagram with no data is 8 bytes of header (RFC 768). */
TEST(udp_send_empty_datagram)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t none[1];
	struct th_frame *o;
	th_host_init(&h);
	th_run(&h, NULL, 0);
	CHECK_EQ(send_udp(&h, none, 0), 0);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_udp_frame(o, none, 0);
		free(o);
	}
	th_host_fini(&h);
}

int main(void)
{
	RUN(udp_datagram_is_delivered_with_payload_intact);
	RUN(udp_zero_checksum_is_accepted);
	RUN(udp_bad_checksum_is_dropped);
	RUN(udp_bad_checksum_flagged_by_the_nic_is_dropped);
	RUN(udp_length_beyond_the_ip_payload_is_dropped);
	RUN(udp_length_below_8_is_dropped);
	RUN(udp_shorter_than_its_header_is_dropped);
	RUN(udp_length_below_the_ip_payload_uses_the_udp_length);
	RUN(udp_every_port_is_delivered_until_ports_are_declared);
	RUN(udp_closed_port_gets_port_unreachable);
	RUN(udp_open_port_is_delivered_and_closing_it_answers_unreachable);
	RUN(udp_limited_broadcast_is_delivered);
	RUN(udp_send_copy_path_frame_is_correct);
	RUN(udp_send_scatter_gather_frame_is_identical_to_the_copy);
	RUN(udp_send_checksum_offload_leaves_the_pseudo_header_sum);
	RUN(udp_send_computed_zero_checksum_is_sent_as_ffff);
	RUN(udp_send_larger_than_the_mtu_is_fragmented);
	RUN(udp_send_of_65507_bytes_reaches_a_receiving_stack);
	RUN(udp_send_of_65507_bytes_is_fragmented_correctly);
	RUN(udp_send_beyond_65507_bytes_is_refused);
	RUN(udp_send_without_packets_is_refused);
	RUN(udp_send_empty_datagram);
	TH_SUMMARY();
}
