/*
 * ICMP (RFC 792, RFC 1122 3.2.2) at the packet level: echo in every size,
 * delivery of echo replies, what is dropped and counted, when errors must
 * not be sent, and the rate limit on the errors we originate.
 */
#include "harness.h"
#include "l3_checks.h"

static uint8_t frame[TH_BUF_SIZE];

/* A frame with an echo request id/seq/data under the IP description d. */
static uint32_t build_echo(uint8_t *f, const struct th_ip *d, uint16_t id, uint16_t seq, const uint8_t *data, uint32_t len)
{
	static uint8_t m[TH_BUF_SIZE];
	uint32_t n = th_icmp(m, 8, 0, id, seq, data, len);
	return th_build_ip4(f, d, m, n);
}

/* RFC 792 "Echo or Echo Reply": the reply swaps the addresses, has type 0
 * and returns identifier, sequence number and data unchanged. */
TEST(icmp_echo_request_gets_a_reply)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint8_t data[17];
	struct th_frame *o;
	struct iip_stats s;
	th_host_init(&h);
	fill_pattern(data, sizeof(data), 1); /* odd length: the last byte is summed alone */
	th_run(&h, frame, build_echo(frame, &d, 0x1234, 0xfedc, data, sizeof(data)));
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		struct th_parsed p;
		th_parse(o, &p);
		check_ip4_to_peer(o, &p, 1);
		CHECK_EQ(p.ip_len, 20 + 8 + sizeof(data));
		if (p.proto == 1)
			check_echo_reply_body(p.payload, p.payload_len, 0x1234, 0xfedc, data, sizeof(data));
		free(o);
	}
	s = th_stats(&h);
	CHECK_EQ(s.rx_icmp, 1);
	CHECK_EQ(s.rx_icmp_echo_request, 1);
	CHECK_EQ(s.tx_icmp_echo_reply, 1);
	CHECK(h.flushes >= 1);
	th_host_fini(&h);
}

/* An echo with no data at all is answered with none. */
TEST(icmp_empty_echo_gets_an_empty_reply)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	struct th_frame *o;
	th_host_init(&h);
	th_run(&h, frame, build_echo(frame, &d, 1, 2, NULL, 0));
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		struct th_parsed p;
		th_parse(o, &p);
		CHECK_EQ(p.ip_len, 28);
		if (p.proto == 1)
			check_echo_reply_body(p.payload, p.payload_len, 1, 2, NULL, 0);
		free(o);
	}
	th_host_fini(&h);
}

/* The largest echo a 1500-byte MTU carries unfragmented (1472 data bytes):
 * the reply is one full-size datagram. */
TEST(icmp_echo_of_1472_bytes_gets_one_full_size_reply)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	static uint8_t data[1472];
	struct th_frame *o;
	th_host_init(&h);
	fill_pattern(data, sizeof(data), 2);
	th_run(&h, frame, build_echo(frame, &d, 9, 10, data, sizeof(data)));
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		struct th_parsed p;
		th_parse(o, &p);
		check_ip4_to_peer(o, &p, 1);
		CHECK_EQ(p.ip_len, 1500);
		if (p.proto == 1)
			check_echo_reply_body(p.payload, p.payload_len, 9, 10, data, sizeof(data));
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 791 3.2: a reply larger than our MTU (here 576 via iip_set_mtu) is
 * fragmented: 552 + 552 + 376 bytes (the largest multiple of 8 that fits
 * 576 - 20 is 552), same ID, MF on all but the last, and
 * the fragments rebuild the reply. */
TEST(icmp_echo_larger_than_the_mtu_gets_a_fragmented_reply)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	static uint8_t data[1472], out[2048];
	uint32_t nf = 0, len;
	th_host_init(&h);
	iip_set_mtu(h.ws, 576);
	fill_pattern(data, sizeof(data), 3);
	th_run(&h, frame, build_echo(frame, &d, 0x55, 0x66, data, sizeof(data)));
	CHECK_EQ(th_out_count(&h), 3);
	if (th_out_count(&h) == 3) {
		CHECK_EQ(be16_(h.out[h.out_head % TH_MAX_FRAMES]->data + 16), 20 + 552);
		CHECK_EQ(be16_(h.out[(h.out_head + 1) % TH_MAX_FRAMES]->data + 16), 20 + 552);
		CHECK_EQ(be16_(h.out[(h.out_head + 2) % TH_MAX_FRAMES]->data + 16), 20 + 376);
	}
	len = collect_fragments(&h, 1, 576, out, &nf);
	CHECK_EQ(nf, 3);
	check_echo_reply_body(out, len, 0x55, 0x66, data, sizeof(data));
	CHECK_EQ(th_stats(&h).tx_ip4_frags, 3);
	th_host_fini(&h);
}

/* Seed 001: iip_ops_icmp_reply is called for an echo reply; nothing is sent. */
TEST(icmp_echo_reply_is_delivered_to_the_application)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint8_t m[64];
	uint32_t n;
	th_host_init(&h);
	n = th_icmp(m, 0, 0, 3, 4, (const uint8_t *) "pong", 4);
	th_run(&h, frame, th_build_ip4(frame, &d, m, n));
	CHECK_EQ(h.n_icmp_reply, 1);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_icmp_echo_reply, 1);
	th_host_fini(&h);
}

/* RFC 792 / RFC 1122 3.2.2: a message whose checksum fails is discarded. */
TEST(icmp_bad_checksum_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	th_host_init(&h);
	n = build_echo(frame, &d, 1, 1, (const uint8_t *) "data", 4);
	frame[14 + 20 + 2] ^= 0x10;
	th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_icmp_malformed, 1);
	CHECK_EQ(th_stats(&h).tx_icmp_echo_reply, 0);
	/* data changed under a right checksum: same */
	n = build_echo(frame, &d, 1, 1, (const uint8_t *) "data", 4);
	frame[n - 1] ^= 0x01;
	th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_icmp_malformed, 2);
	th_host_fini(&h);
}

/* An ICMP message shorter than its 8-byte header is malformed. */
TEST(icmp_truncated_message_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint8_t m[8];
	th_host_init(&h);
	th_icmp(m, 8, 0, 0, 0, NULL, 0);
	th_run(&h, frame, th_build_ip4(frame, &d, m, 4));
	th_run(&h, frame, th_build_ip4(frame, &d, m, 7));
	th_run(&h, frame, th_build_ip4(frame, &d, m, 0));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_icmp_malformed, 3);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2.6: an echo request to a broadcast or multicast IP address
 * MAY be silently discarded; we do (smurf amplification). */
TEST(icmp_echo_to_broadcast_or_multicast_is_not_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	th_host_init(&h);
	d.dst = 0xffffffffU;
	n = build_echo(frame, &d, 1, 1, (const uint8_t *) "smurf", 5);
	memcpy(frame, th_mac_bcast, 6);
	th_run(&h, frame, n);
	d.dst = 0xe0000001U;
	n = build_echo(frame, &d, 1, 1, (const uint8_t *) "smurf", 5);
	memcpy(frame, "\x01\x00\x5e\x00\x00\x01", 6);
	th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_icmp_echo_reply, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_not_for_us, 2);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2: an ICMP error MUST NOT be sent about an ICMP error, and
 * messages of unknown type MUST be silently discarded: errors and unknown
 * types we receive produce nothing. */
TEST(icmp_errors_and_unknown_types_received_are_not_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1), inner = th_ip_default(17);
	uint8_t quoted[64], m[128];
	static const uint8_t types[] = { 3, 4, 5, 11, 12, 42, 255 };
	uint32_t i, q, n;
	th_host_init(&h);
	/* what an error quotes: one of our datagrams, self -> peer */
	inner.src = TH_IP_SELF;
	inner.dst = TH_IP_PEER;
	q = th_ip4(quoted, &inner, 8);
	q += th_udp(quoted + q, TH_IP_SELF, TH_IP_PEER, 5000, 4000, NULL, 0);
	for (i = 0; i < sizeof(types); i++) {
		n = th_icmp(m, types[i], 1, 0, 0, quoted, q);
		th_run(&h, frame, th_build_ip4(frame, &d, m, n));
	}
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_icmp, sizeof(types));
	CHECK_EQ(th_stats(&h).rx_icmp_unreach, 1);
	CHECK_EQ(th_stats(&h).rx_icmp_other, sizeof(types) - 1);
	CHECK_EQ(th_stats(&h).rx_icmp_malformed, 0);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 0);
	CHECK_EQ(h.n_icmp_reply, 0);
	th_host_fini(&h);
}

/* A UDP datagram to a closed port, with its frame's link destination and IP
 * destination given; returns the frame length. */
static uint32_t build_udp_closed(uint8_t *f, const uint8_t *eth_dst, uint32_t ip_dst)
{
	struct th_ip d = th_ip_default(17);
	uint8_t u[64];
	uint32_t n;
	d.dst = ip_dst;
	n = th_udp(u, TH_IP_PEER, ip_dst, 4000, 9, (const uint8_t *) "closed", 6);
	n = th_build_ip4(f, &d, u, n);
	memcpy(f, eth_dst, 6);
	return n;
}

/* RFC 1122 3.2.2: no error about a datagram to an IP broadcast address. */
TEST(icmp_no_error_about_an_ip_broadcast_datagram)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	th_host_init(&h);
	iip_udp_port_open(h.ws, htons_(7), 1);
	th_run(&h, frame, build_udp_closed(frame, th_mac_bcast, 0xffffffffU));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_port_closed, 1);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 0);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2: "An ICMP error message MUST NOT be sent as the result of
 * receiving ... a datagram sent as a link-layer broadcast" (or multicast),
 * even when its IP destination is our unicast address. */
TEST(icmp_no_error_about_a_link_layer_broadcast_or_multicast)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	th_host_init(&h);
	iip_udp_port_open(h.ws, htons_(7), 1);
	th_run(&h, frame, build_udp_closed(frame, th_mac_bcast, TH_IP_SELF));
	th_run(&h, frame, build_udp_closed(frame, (const uint8_t *) "\x01\x00\x5e\x00\x00\x01", TH_IP_SELF));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_udp_port_closed, 2);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 0);
	th_host_fini(&h);
}

/* RFC 1812 4.3.2.8 (and RFC 1122 3.2.2's advice to limit error rates): at
 * most IIP_CONF_ICMP_RATE_BURST errors per IIP_CONF_ICMP_RATE_INTERVAL_MS;
 * the budget comes back when the interval has passed, not before. */
TEST(icmp_errors_are_rate_limited)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(253);
	uint8_t l4[32];
	uint32_t n, i, sent;
	struct th_frame *o;
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 4);
	n = th_build_ip4(frame, &d, l4, sizeof(l4));
	for (i = 0; i < 2 * IIP_CONF_ICMP_RATE_BURST + 5; i++)
		th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), IIP_CONF_ICMP_RATE_BURST);
	for (sent = 0; (o = th_pop(&h)) != NULL; sent++) {
		check_icmp_error(o, 3, 2, frame + 14, n - 14);
		free(o);
	}
	CHECK_EQ(th_stats(&h).tx_icmp_rate_limited, IIP_CONF_ICMP_RATE_BURST + 5);
	CHECK_EQ(th_stats(&h).rx_ip4_unknown_proto, 2 * IIP_CONF_ICMP_RATE_BURST + 5);
	/* just before the interval ends: still nothing */
	h.now_ns += (uint64_t) (IIP_CONF_ICMP_RATE_INTERVAL_MS - 1) * 1000000ULL;
	th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), 0);
	/* the interval has passed: a new burst, and again no more than that */
	h.now_ns += 1000000ULL;
	for (i = 0; i < 2 * IIP_CONF_ICMP_RATE_BURST; i++)
		th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), IIP_CONF_ICMP_RATE_BURST);
	while ((o = th_pop(&h)) != NULL) {
		check_icmp_error(o, 3, 2, frame + 14, n - 14);
		free(o);
	}
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 2 * IIP_CONF_ICMP_RATE_BURST);
	th_host_fini(&h);
}

/* Echo replies are not errors: they are not rate limited. */
TEST(icmp_echo_replies_are_not_rate_limited)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	uint32_t i, n;
	th_host_init(&h);
	n = build_echo(frame, &d, 1, 1, (const uint8_t *) "x", 1);
	for (i = 0; i < 3 * IIP_CONF_ICMP_RATE_BURST; i++)
		th_run(&h, frame, n);
	CHECK_EQ(th_out_count(&h), 3 * IIP_CONF_ICMP_RATE_BURST);
	CHECK_EQ(th_stats(&h).tx_icmp_rate_limited, 0);
	th_host_fini(&h);
}

/* No packet to build the reply in: nothing sent, the request still freed. */
TEST(icmp_echo_without_packets_is_not_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	h.alloc_fail = 1;
	th_run(&h, frame, build_echo(frame, &d, 1, 1, (const uint8_t *) "x", 1));
	h.alloc_fail = 0;
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_icmp_echo_reply, 0);
	CHECK_EQ(th_stats(&h).pkt_alloc_failed, 1);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2: no error about a datagram "whose source address does not
 * define a single host -- e.g., a zero address, a loopback address, a
 * broadcast address, a multicast address, or a Class E address".  The first
 * four never get past IP input (test_ip4.c); a Class E source does. */
TEST(icmp_no_error_to_a_class_e_source)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(253);
	uint8_t l4[16];
	static const uint32_t srcs[] = { 0xf0000001U, 0xfffffffeU };
	uint32_t i;
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 5);
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		d.src = srcs[i];
		th_run(&h, frame, th_build_ip4(frame, &d, l4, sizeof(l4)));
	}
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 0);
	th_host_fini(&h);
}

/* RFC 1122 4.1.3.1 after reassembly: a fragmented datagram to a closed
 * port gets one port unreachable, quoting the rebuilt datagram's header
 * (whole length, no fragment bits) and its first bytes (RFC 792). */
TEST(icmp_port_unreachable_for_a_reassembled_datagram)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(17);
	static uint8_t payload[1200], l4[1300], expect[1400];
	struct th_frame *o;
	uint32_t n, hl;
	th_host_init(&h);
	iip_udp_port_open(h.ws, htons_(7), 1);
	fill_pattern(payload, sizeof(payload), 6);
	n = th_udp(l4, TH_IP_PEER, TH_IP_SELF, 4000, 9, payload, sizeof(payload));
	th_run(&h, frame, th_build_frag(frame, &d, l4, 600, n - 600, 0));
	th_run(&h, frame, th_build_frag(frame, &d, l4, 0, 600, 1));
	hl = th_ip4(expect, &d, n);
	memcpy(expect + hl, l4, n);
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 3, expect, hl + n);
		free(o);
	}
	th_host_fini(&h);
}

/* No packet for the error: nothing sent, the offending datagram still freed. */
TEST(icmp_error_without_packets_is_skipped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_ip d = th_ip_default(253);
	uint8_t l4[16];
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 7);
	h.alloc_fail = 1;
	th_run(&h, frame, th_build_ip4(frame, &d, l4, sizeof(l4)));
	h.alloc_fail = 0;
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 0);
	CHECK_EQ(th_stats(&h).pkt_alloc_failed, 1);
	th_host_fini(&h);
}

int main(void)
{
	RUN(icmp_echo_request_gets_a_reply);
	RUN(icmp_empty_echo_gets_an_empty_reply);
	RUN(icmp_echo_of_1472_bytes_gets_one_full_size_reply);
	RUN(icmp_echo_larger_than_the_mtu_gets_a_fragmented_reply);
	RUN(icmp_echo_reply_is_delivered_to_the_application);
	RUN(icmp_bad_checksum_is_dropped);
	RUN(icmp_truncated_message_is_dropped);
	RUN(icmp_echo_to_broadcast_or_multicast_is_not_answered);
	RUN(icmp_errors_and_unknown_types_received_are_not_answered);
	RUN(icmp_no_error_about_an_ip_broadcast_datagram);
	RUN(icmp_no_error_about_a_link_layer_broadcast_or_multicast);
	RUN(icmp_no_error_to_a_class_e_source);
	RUN(icmp_port_unreachable_for_a_reassembled_datagram);
	RUN(icmp_error_without_packets_is_skipped);
	RUN(icmp_errors_are_rate_limited);
	RUN(icmp_echo_replies_are_not_rate_limited);
	RUN(icmp_echo_without_packets_is_not_answered);
	TH_SUMMARY();
}
