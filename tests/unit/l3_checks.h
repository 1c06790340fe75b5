/*
 * l3_checks.h: assertions shared by the IPv4, ICMP and UDP packet-level
 * tests (include after harness.h).  Each checks every header field of a
 * frame the stack sent against what the RFCs require and the reference
 * checksum of harness.h.
 */
#ifndef TESTS_UNIT_L3_CHECKS_H
#define TESTS_UNIT_L3_CHECKS_H

/* RFC 1812 4.3.2.3 / RFC 1122 3.2.2: an error quotes as much of the
 * offending datagram as keeps it within 576 bytes. */
#define L3_ICMP_QUOTE_MAX (576 - 20 - 8)

/* An unfragmented IPv4 datagram we originated to the peer: link addresses,
 * version, header length, TTL (RFC 1122 3.2.1.7), no MF/offset, checksum,
 * total length matching the frame. */
static void check_ip4_to_peer(const struct th_frame *o, const struct th_parsed *p, uint8_t proto)
{
	CHECK(!memcmp(o->data, th_mac_peer, 6));
	CHECK(!memcmp(o->data + 6, th_mac_self, 6));
	CHECK_EQ(p->ethertype, 0x0800);
	if (p->ethertype != 0x0800)
		return;
	CHECK_EQ(p->ip[0], 0x45);
	CHECK_EQ(p->ttl, 64);
	CHECK_EQ(p->proto, proto);
	CHECK_EQ(p->src, TH_IP_SELF);
	CHECK_EQ(p->dst, TH_IP_PEER);
	CHECK(p->ip_csum_ok);
	CHECK_EQ(p->ip_frag & 0xbfff, 0); /* no reserved bit, MF or offset */
	CHECK_EQ(o->len, 14 + (uint32_t) p->ip_len);
}

/* An ICMP error about the datagram orig_ip (its IP header onwards, orig_len bytes). */
static void check_icmp_error(const struct th_frame *o, uint8_t type, uint8_t code, const uint8_t *orig_ip, uint32_t orig_len)
{
	struct th_parsed p;
	uint32_t quote = orig_len < L3_ICMP_QUOTE_MAX ? orig_len : L3_ICMP_QUOTE_MAX;
	th_parse(o, &p);
	check_ip4_to_peer(o, &p, 1);
	if (p.ethertype != 0x0800 || p.proto != 1)
		return;
	CHECK_EQ(p.ip_len, 20 + 8 + quote);
	CHECK_EQ(p.payload[0], type);
	CHECK_EQ(p.payload[1], code);
	CHECK_EQ(ref_fold(ref_sum(p.payload, p.payload_len, 0)), 0);
	CHECK_EQ(be32_(p.payload + 4), 0); /* "unused" for these codes (RFC 792) */
	if (p.ip_len == 20 + 8 + quote)
		CHECK(!memcmp(p.payload + 8, orig_ip, quote));
}

/* An echo reply (RFC 792): type 0, code 0, the request's identifier,
 * sequence number and data, a correct checksum. */
static void check_echo_reply_body(const uint8_t *icmp, uint32_t icmp_len, uint16_t id, uint16_t seq, const uint8_t *data, uint32_t len)
{
	CHECK_EQ(icmp_len, 8 + len);
	if (icmp_len != 8 + len)
		return;
	CHECK_EQ(icmp[0], 0);
	CHECK_EQ(icmp[1], 0);
	CHECK_EQ(be16_(icmp + 4), id);
	CHECK_EQ(be16_(icmp + 6), seq);
	CHECK_EQ(ref_fold(ref_sum(icmp, icmp_len, 0)), 0);
	if (len)
		CHECK(!memcmp(icmp + 8, data, len));
}

/* Fills buf with a pattern that differs at every offset modulo 251, so that
 * misplaced bytes show. */
static void fill_pattern(uint8_t *buf, uint32_t len, uint8_t seed)
{
	uint32_t i;
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t) ((i % 251) + seed);
}

/* Pops every frame sent and checks they are the fragments of one datagram
 * to the peer (same ID, MF on all but the last, offsets contiguous, each
 * fragment's data a multiple of 8 but the last, within the MTU); rebuilds
 * its L4 bytes into out.  Returns the L4 length (0 on any inconsistency). */
static uint32_t collect_fragments(struct th_host *h, uint8_t proto, uint32_t mtu, uint8_t *out, uint32_t *nfrags)
{
	struct th_frame *o;
	uint32_t end = 0, n = 0, id = 0, last_seen = 0, ok = 1;
	while ((o = th_pop(h)) != NULL) {
		struct th_parsed p;
		uint32_t off, len;
		th_parse(o, &p);
		CHECK(!memcmp(o->data, th_mac_peer, 6));
		CHECK_EQ(p.ethertype, 0x0800);
		if (p.ethertype != 0x0800) {
			free(o);
			ok = 0;
			continue;
		}
		CHECK_EQ(p.ip[0], 0x45);
		CHECK_EQ(p.ttl, 64);
		CHECK_EQ(p.proto, proto);
		CHECK_EQ(p.src, TH_IP_SELF);
		CHECK_EQ(p.dst, TH_IP_PEER);
		CHECK(p.ip_csum_ok);
		CHECK(!o->ol_udp_csum && !o->ol_tcp_csum); /* a fragment's L4 sum cannot be offloaded */
		CHECK_EQ(p.ip_frag & 0xc000, 0); /* no DF on a fragment, no reserved bit */
		CHECK(p.ip_len <= mtu);
		CHECK_EQ(o->len, 14 + (uint32_t) p.ip_len);
		off = (uint32_t) (p.ip_frag & 0x1fff) * 8;
		len = p.ip_len - 20;
		if (n == 0)
			id = p.ip_id;
		CHECK_EQ(p.ip_id, id);
		CHECK_EQ(off, end); /* sent in order, no gap, no overlap */
		CHECK(!last_seen);
		if (p.ip_frag & 0x2000)
			CHECK_EQ(len % 8, 0);
		else
			last_seen = 1;
		if (off != end || last_seen > 1)
			ok = 0;
		end = th_frag_place(o, out);
		n++;
		free(o);
	}
	CHECK(last_seen);
	*nfrags = n;
	return ok && last_seen ? end : 0;
}

#endif /* TESTS_UNIT_L3_CHECKS_H */
