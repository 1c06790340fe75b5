/*
 * IPv4 input validation and output headers (RFC 791, RFC 1122 3.2.1) at the
 * packet level.  Most input cases use an ICMP echo request as the probe: a
 * valid datagram is answered, a dropped one is not, and the drop counter
 * says why.  Reassembly has its own file (test_ip4_reasm.c).
 */
#include "harness.h"
#include "l3_checks.h"

static const uint8_t echo_data[16] = "0123456789abcdef";

/* A frame with an echo request (id 7, seq 1, echo_data) under the IP description d. */
static uint32_t build_echo(uint8_t *f, const struct th_ip *d)
{
	uint8_t m[64];
	uint32_t n = th_icmp(m, 8, 0, 7, 1, echo_data, sizeof(echo_data));
	return th_build_ip4(f, d, m, n);
}

/* Pops the reply to build_echo's request and checks it fully. */
static void expect_echo_reply(struct th_host *h)
{
	struct th_frame *o = th_pop(h);
	CHECK(o != NULL);
	if (o) {
		struct th_parsed p;
		th_parse(o, &p);
		check_ip4_to_peer(o, &p, 1);
		if (p.proto == 1)
			check_echo_reply_body(p.payload, p.payload_len, 7, 1, echo_data, sizeof(echo_data));
		free(o);
	}
	CHECK_EQ(th_out_count(h), 0);
}

/* Runs f, expects no frame out and the counter at field offset to have grown by one. */
#define EXPECT_DROP(h, f, len, counter) \
	do { \
		unsigned long _before = th_stats(h).counter; \
		th_run((h), (f), (len)); \
		CHECK_EQ(th_out_count(h), 0); \
		CHECK_EQ(th_stats(h).counter, _before + 1); \
		th_drain(h); \
	} while (0)

/* The probe itself: a well-formed echo to us is answered (baseline for the drops below). */
TEST(ip4_valid_datagram_is_processed)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	CHECK_EQ(th_stats(&h).rx_ip4, 1);
	th_host_fini(&h);
}

/* IEEE 802.3 / RFC 1122 2.4: a unicast frame for another MAC (promiscuous NIC) is not ours. */
TEST(ip4_frame_for_another_unicast_mac_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	th_host_init(&h);
	n = build_echo(f, &d);
	f[5] = 0x09;
	EXPECT_DROP(&h, f, n, rx_l2_not_for_us);
	CHECK_EQ(th_stats(&h).rx_ip4, 0);
	th_host_fini(&h);
}

/* RFC 791 3.1 / RFC 1122 3.2.1.1: a datagram whose version is not 4 is discarded silently. */
TEST(ip4_bad_version_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	uint8_t versions[] = { 1, 5, 6, 15 }; /* (0 means "4" to th_ip4) */
	uint32_t i;
	th_host_init(&h);
	for (i = 0; i < sizeof(versions); i++) {
		d.version = versions[i];
		EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_version);
	}
	th_host_fini(&h);
}

/* RFC 791 3.1: IHL counts 32-bit words and is at least 5. */
TEST(ip4_ihl_below_5_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	uint32_t n, ihl;
	th_host_init(&h);
	for (ihl = 0; ihl < 5; ihl++) {
		n = build_echo(f, &d);
		f[14] = (uint8_t) (0x40 | ihl);
		th_ip4_fix_csum(f + 14);
		EXPECT_DROP(&h, f, n, rx_ip4_bad_hdr_len);
	}
	th_host_fini(&h);
}

/* RFC 1122 3.2.1.1 (header validity): a header longer than the frame is malformed. */
TEST(ip4_ihl_beyond_the_frame_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(253);
	uint8_t l4[4] = { 1, 2, 3, 4 };
	uint32_t n;
	th_host_init(&h);
	n = th_build_ip4(f, &d, l4, sizeof(l4)); /* 24 bytes of IP */
	f[14] = 0x47; /* 28-byte header */
	EXPECT_DROP(&h, f, n, rx_ip4_bad_hdr_len);
	f[14] = 0x4f; /* 60-byte header */
	EXPECT_DROP(&h, f, n, rx_ip4_bad_hdr_len);
	th_host_fini(&h);
}

/* A frame too short for the 20-byte fixed header. */
TEST(ip4_truncated_header_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	build_echo(f, &d);
	EXPECT_DROP(&h, f, 14 + 19, rx_ip4_truncated);
	EXPECT_DROP(&h, f, 14, rx_ip4_truncated);
	th_host_fini(&h);
}

/* RFC 791 3.1 / RFC 1122 3.2.1.1: total length covers the header. */
TEST(ip4_total_length_below_ihl_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	d.len_adjust = (int16_t) -(8 + (int) sizeof(echo_data) + 1); /* total length 19 */
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_total_len);
	d.len_adjust = (int16_t) -(8 + (int) sizeof(echo_data) + 20); /* total length 0 */
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_total_len);
	th_host_fini(&h);
}

/* A total length beyond the bytes received: the datagram was truncated on the way. */
TEST(ip4_total_length_beyond_the_frame_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	d.len_adjust = 1;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_total_len);
	d.len_adjust = 1000;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_total_len);
	th_host_fini(&h);
}

/* RFC 894: short frames are padded to 60 bytes; the IP total length says
 * where the datagram ends and the padding is not part of it (the echo
 * checksum would fail and the reply would carry it otherwise). */
TEST(ip4_ethernet_padding_beyond_total_length_is_ignored)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256], m[16];
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	n = th_icmp(m, 8, 0, 0x4242, 9, (const uint8_t *) "pad", 3); /* 11 bytes: frame of 45 */
	n = th_build_ip4(f, &d, m, n);
	memset(f + n, 0xee, 60 - n);
	th_run(&h, f, 60);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		struct th_parsed p;
		th_parse(o, &p);
		check_ip4_to_peer(o, &p, 1);
		CHECK_EQ(p.ip_len, 31);
		if (p.proto == 1)
			check_echo_reply_body(p.payload, p.payload_len, 0x4242, 9, (const uint8_t *) "pad", 3);
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 791 3.1 / RFC 1122 3.2.1.2: a datagram with a bad header checksum is discarded silently. */
TEST(ip4_bad_header_checksum_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	d.bad_csum = 1;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_csum);
	th_host_fini(&h);
}

/* With receive checksum offload the NIC's verdict is used: a datagram it
 * flags bad is dropped even though its sum is right... */
TEST(ip4_bad_header_checksum_flagged_by_the_nic_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	struct th_pkt *p;
	th_host_init(&h);
	h.f_ip4_rx_csum = 1;
	p = th_pkt_from(f, build_echo(f, &d));
	p->rx_csum_bad = 1;
	th_run_pkt(&h, p);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_ip4_bad_csum, 1);
	/* ... and one it verified is processed */
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	CHECK_EQ(th_stats(&h).rx_ip4_bad_csum, 1);
	th_host_fini(&h);
}

/* RFC 791 3.1, RFC 1122 3.2.1.8: options are passed over when well formed:
 * NOP and EOL, record route (7) with room for two hops, timestamp (68),
 * junk after EOL, an option type nobody defined. */
TEST(ip4_well_formed_options_are_accepted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	static const uint8_t nop_eol[4] = { 1, 1, 1, 0 };
	static const uint8_t record_route[12] = { 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t timestamp[12] = { 68, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t eol_then_junk[4] = { 0, 0xff, 0xff, 0xff }; /* nothing after EOL is read */
	static const uint8_t unknown[4] = { 0x9e, 4, 0xab, 0xcd }; /* RFC 1122 3.2.1.8: unknown options MUST be ignored */
	th_host_init(&h);
	d.opts = nop_eol;
	d.opts_len = 4;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	d.opts = record_route;
	d.opts_len = 12;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	d.opts = timestamp;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	d.opts = eol_then_junk;
	d.opts_len = 4;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	d.opts = unknown;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	CHECK_EQ(th_stats(&h).rx_ip4_bad_options, 0);
	th_host_fini(&h);
}

/* RFC 791 3.1: an option's length octet counts type, length and data, so
 * it is at least 2 and the option lies within the header. */
TEST(ip4_malformed_options_are_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	static const uint8_t len0[4] = { 7, 0, 4, 0 };
	static const uint8_t len1[4] = { 7, 1, 4, 0 };
	static const uint8_t past_end[8] = { 7, 11, 4, 0, 0, 0, 0, 0 };
	static const uint8_t no_len_octet[4] = { 1, 1, 1, 7 };
	th_host_init(&h);
	d.opts_len = 4;
	d.opts = len0;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	d.opts = len1;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	d.opts = no_len_octet;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	d.opts = past_end;
	d.opts_len = 8;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	th_host_fini(&h);
}

/* RFC 7126 4.3, 4.4: loose and strict source routes are dropped by hosts
 * (RFC 1122 3.3.5 leaves a host free to; they serve spoofing). */
TEST(ip4_source_route_options_are_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	static const uint8_t lsrr[8] = { 131, 7, 4, 10, 0, 0, 9, 0 };
	static const uint8_t ssrr[8] = { 137, 7, 4, 10, 0, 0, 9, 0 };
	th_host_init(&h);
	d.opts_len = 8;
	d.opts = lsrr;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	d.opts = ssrr;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_options);
	th_host_fini(&h);
}

/* RFC 1122 3.2.1.3: a host MUST silently discard a datagram whose source is
 * a broadcast, multicast, loopback or "this network" address. */
TEST(ip4_martian_sources_are_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	static const uint32_t srcs[] = { 0xffffffffU, 0xe0000001U, 0xefffffffU, 0x7f000001U, 0x7f0a0b0cU, 0x00000000U, 0x00000005U };
	uint32_t i;
	th_host_init(&h);
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		d.src = srcs[i];
		EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_bad_src);
	}
	th_host_fini(&h);
}

/* RFC 1122 3.2.1.3, 3.3.4: a host that does not forward drops datagrams for
 * other addresses (another unicast, a multicast group it did not join). */
TEST(ip4_not_for_us_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	th_host_init(&h);
	d.dst = 0x0a000003U;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_not_for_us);
	d.dst = 0xe0000001U;
	EXPECT_DROP(&h, f, build_echo(f, &d), rx_ip4_not_for_us);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2.1: a host SHOULD send protocol unreachable for a transport
 * protocol it does not have; RFC 792: the error quotes the IP header and at
 * least the first 64 bits of data. */
TEST(ip4_unknown_protocol_gets_protocol_unreachable)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256], l4[40];
	struct th_ip d = th_ip_default(253);
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 3);
	n = th_build_ip4(f, &d, l4, sizeof(l4));
	th_run(&h, f, n);
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 2, f + 14, n - 14);
		free(o);
	}
	CHECK_EQ(th_stats(&h).rx_ip4_unknown_proto, 1);
	CHECK_EQ(th_stats(&h).tx_icmp_unreach, 1);
	th_host_fini(&h);
}

/* RFC 1812 4.3.2.3 (which RFC 1122 hosts follow in practice): the quote is
 * cut so that the error fits 576 bytes. */
TEST(ip4_protocol_unreachable_quote_is_cut_at_576_bytes)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t f[2048], l4[1400];
	struct th_ip d = th_ip_default(253);
	uint32_t n;
	struct th_frame *o;
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 11);
	n = th_build_ip4(f, &d, l4, sizeof(l4));
	th_run(&h, f, n);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 2, f + 14, n - 14);
		CHECK_EQ(o->len, 14 + 576);
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 1122 3.2.1.7: TTL of what we originate (64, RFC 1700); TCP sets DF
 * (path MTU discovery, RFC 1191); the ID field changes between datagrams. */
TEST(ip4_tcp_output_has_ttl_64_and_df)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_seg s = th_seg_default();
	struct th_frame *o;
	struct th_parsed p;
	uint16_t id1 = 0;
	th_host_init(&h);
	h.accept_ports[80 >> 3] |= 1 << (80 & 7);
	s.flags = IIP_TCP_FLAG_SYN;
	s.seq = 1000;
	th_send_seg(&h, &s);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		th_parse(o, &p);
		CHECK_EQ(p.ip[0], 0x45);
		CHECK_EQ(p.ttl, 64);
		CHECK_EQ(p.proto, 6);
		CHECK_EQ(p.ip_frag, 0x4000); /* DF, no MF, offset 0 */
		CHECK_EQ(p.src, TH_IP_SELF);
		CHECK_EQ(p.dst, TH_IP_PEER);
		CHECK(p.ip_csum_ok);
		id1 = p.ip_id;
		free(o);
	}
	/* the next datagram (a second connection's SYN-ACK) gets another ID */
	s.sport = 40001;
	th_send_seg(&h, &s);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		th_parse(o, &p);
		CHECK_EQ(p.ip_frag, 0x4000);
		CHECK(p.ip_id != id1);
		free(o);
	}
	th_host_fini(&h);
}

/* RFC 791 3.2 / RFC 6864 4.1: fragments of one datagram share an ID, and
 * two fragmented datagrams to the same peer have different IDs. */
TEST(ip4_fragmented_datagrams_get_distinct_ids)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[4000];
	uint8_t mac[6];
	uint16_t ids[2];
	uint32_t k;
	th_host_init(&h);
	memcpy(mac, th_mac_peer, 6);
	fill_pattern(payload, sizeof(payload), 1);
	th_run(&h, NULL, 0);
	for (k = 0; k < 2; k++) {
		struct th_pkt *pk = th_pkt_from(payload, sizeof(payload));
		uint32_t nf = 0;
		struct th_frame *first;
		CHECK_EQ(iip_udp_send(h.ws, h.mac, h.ip_be, htons_(5000), mac, htonl_(TH_IP_PEER), htons_(6000), pk, h.opaque), 0);
		CHECK_EQ(th_out_count(&h), 3);
		first = h.out[h.out_head % TH_MAX_FRAMES];
		ids[k] = be16_(first->data + 14 + 4);
		CHECK_EQ(collect_fragments(&h, 17, 1500, l4, &nf), 8 + sizeof(payload));
		CHECK_EQ(nf, 3);
	}
	CHECK(ids[0] != ids[1]);
	th_host_fini(&h);
}

/* With IPv4 transmit checksum offload the stack leaves the header sum to the
 * NIC: it marks the packet and the field is zero for the NIC to fill. */
TEST(ip4_tx_checksum_offload_marks_the_packet)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	struct th_frame *o;
	th_host_init(&h);
	h.f_ip4_tx_csum = 1;
	th_run(&h, f, build_echo(f, &d));
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		CHECK(o->ol_ip4_csum);
		CHECK_EQ(be16_(o->data + 14 + 10), 0);
		free(o);
	}
	th_host_fini(&h);
}

/* An unknown EtherType is not ours to answer. */
TEST(ip4_unknown_ethertype_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	th_host_init(&h);
	n = build_echo(f, &d);
	put16_(f + 12, 0x86dd);
	EXPECT_DROP(&h, f, n, rx_l2_unknown_ethertype);
	th_host_fini(&h);
}

/* RFC 1122 3.2.1.7: "A host MUST NOT discard a datagram just because it was
 * received with TTL less than 2" (TTL matters to routers only). */
TEST(ip4_ttl_0_or_1_to_us_is_accepted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[256];
	struct th_ip d = th_ip_default(1);
	uint32_t n;
	th_host_init(&h);
	d.ttl = 1;
	th_run(&h, f, build_echo(f, &d));
	expect_echo_reply(&h);
	n = build_echo(f, &d);
	f[14 + 8] = 0;
	th_ip4_fix_csum(f + 14);
	th_run(&h, f, n);
	expect_echo_reply(&h);
	th_host_fini(&h);
}

/* RFC 791 3.2: every link carries 68-byte datagrams unfragmented, so
 * iip_set_mtu ignores anything smaller; at 68 a 100-byte datagram goes out
 * in fragments of 48 data bytes. */
TEST(ip4_mtu_is_at_least_68)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[100], l4[200];
	uint8_t mac[6];
	uint32_t nf = 0;
	th_host_init(&h);
	memcpy(mac, th_mac_peer, 6);
	fill_pattern(payload, sizeof(payload), 2);
	th_run(&h, NULL, 0);
	iip_set_mtu(h.ws, 67);
	CHECK_EQ(iip_udp_send(h.ws, h.mac, h.ip_be, htons_(5000), mac, htonl_(TH_IP_PEER), htons_(6000),
			      th_pkt_from(payload, sizeof(payload)), h.opaque), 0);
	CHECK_EQ(th_out_count(&h), 1);
	th_drain(&h);
	iip_set_mtu(h.ws, 68);
	CHECK_EQ(iip_udp_send(h.ws, h.mac, h.ip_be, htons_(5000), mac, htonl_(TH_IP_PEER), htons_(6000),
			      th_pkt_from(payload, sizeof(payload)), h.opaque), 0);
	CHECK_EQ(collect_fragments(&h, 17, 68, l4, &nf), 8 + sizeof(payload));
	CHECK_EQ(nf, 3); /* 48 + 48 + 12 */
	CHECK(!memcmp(l4 + 8, payload, sizeof(payload)));
	th_host_fini(&h);
}

int main(void)
{
	RUN(ip4_valid_datagram_is_processed);
	RUN(ip4_frame_for_another_unicast_mac_is_dropped);
	RUN(ip4_bad_version_is_dropped);
	RUN(ip4_ihl_below_5_is_dropped);
	RUN(ip4_ihl_beyond_the_frame_is_dropped);
	RUN(ip4_truncated_header_is_dropped);
	RUN(ip4_total_length_below_ihl_is_dropped);
	RUN(ip4_total_length_beyond_the_frame_is_dropped);
	RUN(ip4_ethernet_padding_beyond_total_length_is_ignored);
	RUN(ip4_bad_header_checksum_is_dropped);
	RUN(ip4_bad_header_checksum_flagged_by_the_nic_is_dropped);
	RUN(ip4_well_formed_options_are_accepted);
	RUN(ip4_ttl_0_or_1_to_us_is_accepted);
	RUN(ip4_malformed_options_are_dropped);
	RUN(ip4_source_route_options_are_dropped);
	RUN(ip4_martian_sources_are_dropped);
	RUN(ip4_not_for_us_is_dropped);
	RUN(ip4_unknown_protocol_gets_protocol_unreachable);
	RUN(ip4_protocol_unreachable_quote_is_cut_at_576_bytes);
	RUN(ip4_tcp_output_has_ttl_64_and_df);
	RUN(ip4_fragmented_datagrams_get_distinct_ids);
	RUN(ip4_mtu_is_at_least_68);
	RUN(ip4_tx_checksum_offload_marks_the_packet);
	RUN(ip4_unknown_ethertype_is_dropped);
	TH_SUMMARY();
}
