/*
 * IPv4 fragment reassembly (RFC 791 3.2, RFC 815, RFC 1122 3.3.2) at the
 * packet level: orders, duplicates, the overlap policy (RFC 5722 style: any
 * overlap drops the datagram), the limits (size, fragment count, slots,
 * timeout) and what a complete datagram turns into (UDP delivery, an echo
 * reply that is itself fragmented).
 */
#include "harness.h"
#include "l3_checks.h"

static uint8_t frame[TH_BUF_SIZE];

/* Sends bytes [off, off + len) of the datagram l4 as one fragment. */
static void send_frag(struct th_host *h, const struct th_ip *d, const uint8_t *l4, uint32_t off, uint32_t len, int more)
{
	th_run(h, frame, th_build_frag(frame, d, l4, off, len, more));
}

/* A UDP datagram peer:4000 -> self:5000 carrying payload; returns its L4 length. */
static uint32_t make_udp(uint8_t *l4, const uint8_t *payload, uint32_t len)
{
	return th_udp(l4, TH_IP_PEER, TH_IP_SELF, 4000, 5000, payload, len);
}

static uint32_t reasm_slots_used(struct th_host *h)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	uint32_t i, n = 0;
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++)
		n += ws->reasm[i].used;
	return n;
}

static void expect_udp_delivered(struct th_host *h, uint32_t n_udp, const uint8_t *payload, uint32_t len)
{
	CHECK_EQ(h->n_udp, n_udp);
	CHECK_EQ(h->last_udp_len, len);
	if (h->last_udp_len == len)
		CHECK(!memcmp(h->last_udp, payload, len));
}

/* RFC 791 3.2: fragments arriving in order rebuild the datagram, byte for byte. */
TEST(reasm_in_order_udp_is_delivered_whole)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	struct iip_stats s;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 5);
	n = make_udp(l4, payload, sizeof(payload));
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	CHECK_EQ(h.n_udp, 0);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_out_count(&h), 0);
	s = th_stats(&h);
	CHECK_EQ(s.rx_ip4_frags, 3);
	CHECK_EQ(s.rx_ip4_reassembled, 1);
	CHECK_EQ(s.rx_ip4_frag_bad, 0);
	CHECK_EQ(s.rx_udp_bad_csum, 0);
	CHECK_EQ(reasm_slots_used(&h), 0);
	th_host_fini(&h);
}

/* RFC 815: fragments may arrive in any order; the last one first here. */
TEST(reasm_reverse_order_udp_is_delivered_whole)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 6);
	n = make_udp(l4, payload, sizeof(payload));
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	CHECK_EQ(h.n_udp, 0);
	send_frag(&h, &d, l4, 0, 1480, 1);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 1);
	CHECK_EQ(reasm_slots_used(&h), 0);
	th_host_fini(&h);
}

/* RFC 815: any order.  47 fragments of 64 bytes, shuffled by a fixed LCG. */
TEST(reasm_random_order_udp_is_delivered_whole)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n, order[47], i, x = 12345;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 7);
	n = make_udp(l4, payload, sizeof(payload));
	CHECK_EQ(n, 47 * 64);
	for (i = 0; i < 47; i++)
		order[i] = i;
	for (i = 46; i > 0; i--) {
		uint32_t j, t;
		x = x * 1103515245U + 12345U;
		j = (x >> 8) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < 47; i++) {
		CHECK_EQ(h.n_udp, 0);
		send_frag(&h, &d, l4, order[i] * 64, 64, order[i] != 46);
	}
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_ip4_frags, 47);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 0);
	th_host_fini(&h);
}

/* Links duplicate frames: an exact duplicate fragment is harmless (RFC 791
 * 3.2 reassembly simply rewrites the same bytes). */
TEST(reasm_exact_duplicate_fragment_is_tolerated)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 8);
	n = make_udp(l4, payload, sizeof(payload));
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 1);
	th_host_fini(&h);
}

/* Overlaps serve only to evade inspection (RFC 1858, RFC 3128); like RFC
 * 5722 for IPv6, an overlap drops the whole datagram.  Each case: the slot is
 * freed at once, the packets it held are released, and the remaining
 * fragments do not produce a datagram. */
static void overlap_case(uint32_t a_off, uint32_t a_len, uint32_t b_off, uint32_t b_len)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[56], l4[64];
	struct th_ip d = th_ip_default(17);
	long alive;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 9);
	make_udp(l4, payload, sizeof(payload));
	alive = th_pkts_alive;
	send_frag(&h, &d, l4, a_off, a_len, 1);
	send_frag(&h, &d, l4, b_off, b_len, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	/* the rest of the datagram around the first fragment arrives: had the
	 * first one been kept, this would complete it */
	if (a_off)
		send_frag(&h, &d, l4, 0, a_off, 1);
	send_frag(&h, &d, l4, a_off + a_len, 64 - (a_off + a_len), 0);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 0);
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

TEST(reasm_overlapping_fragments_drop_the_datagram)
{
	overlap_case(0, 16, 8, 16);	/* the new one starts inside the previous one */
	overlap_case(16, 16, 8, 16);	/* the new one runs into the next one */
	overlap_case(0, 16, 0, 24);	/* same start, longer */
	overlap_case(8, 24, 16, 8);	/* the new one lies inside an old one */
	overlap_case(16, 8, 8, 24);	/* the new one covers an old one */
}

/* RFC 791 3.1: a datagram is at most 65535 bytes; a fragment ending past
 * that (the "ping of death") is dropped. */
TEST(reasm_oversized_datagram_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t l4[64];
	struct th_ip d = th_ip_default(17);
	long alive;
	th_host_init(&h);
	memset(l4, 0x41, sizeof(l4));
	alive = th_pkts_alive;
	/* offset 65528 (the largest) + 16 bytes */
	{
		struct th_ip fd = d;
		uint32_t n;
		fd.frag = 0x1fff;
		n = th_build_ip4(frame, &fd, l4, 16);
		th_run(&h, frame, n);
		fd.frag = 0x2000 | (65512 / 8); /* 65512 + 8 + 20 header = 65540 */
		n = th_build_ip4(frame, &fd, l4, 8);
		th_run(&h, frame, n);
	}
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 2);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

/* RFC 791 3.2: the last fragment (MF clear) fixes the datagram's length; a
 * second, different last fragment, a fragment past that end, or a last
 * fragment ending before bytes already received contradict it. */
static void inconsistent_case(uint32_t a_off, int a_more, uint32_t b_off, int b_more)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[56], l4[64];
	struct th_ip d = th_ip_default(17);
	long alive;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 10);
	make_udp(l4, payload, sizeof(payload));
	alive = th_pkts_alive;
	send_frag(&h, &d, l4, a_off, 8, a_more);
	send_frag(&h, &d, l4, b_off, 8, b_more);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 0);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

TEST(reasm_last_fragment_with_inconsistent_total_is_dropped)
{
	inconsistent_case(16, 0, 24, 0);	/* two last fragments, different ends */
	inconsistent_case(16, 0, 24, 1);	/* a fragment beyond the known end */
	inconsistent_case(24, 1, 8, 0);		/* the end falls before bytes already held */
}

/* RFC 791 3.2: every fragment but the last carries a multiple of 8 bytes. */
TEST(reasm_middle_fragment_not_a_multiple_of_8_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[56], l4[64];
	struct th_ip d = th_ip_default(17);
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 11);
	make_udp(l4, payload, sizeof(payload));
	send_frag(&h, &d, l4, 0, 16, 1);
	send_frag(&h, &d, l4, 16, 12, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	send_frag(&h, &d, l4, 32, 32, 0);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 0);
	th_host_fini(&h);
}

/* RFC 1858 3.4: a TCP fragment at offset 8 bytes (FO = 1) can only serve to
 * overwrite the TCP flags of the first fragment: drop it.  The same offset
 * is ordinary for UDP. */
TEST(reasm_tcp_fragment_at_offset_8_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t l4[64];
	struct th_ip d = th_ip_default(6);
	long alive;
	th_host_init(&h);
	memset(l4, 0, sizeof(l4));
	alive = th_pkts_alive;
	send_frag(&h, &d, l4, 8, 16, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(th_pkts_alive, alive);
	d.proto = 17;
	send_frag(&h, &d, l4, 8, 16, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(reasm_slots_used(&h), 1);
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

/* Memory per datagram is bounded (IIP_CONF_IP4_REASM_MAX_FRAGS): one
 * fragment more drops the datagram and releases everything it held. */
TEST(reasm_too_many_fragments_drop_the_datagram)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t l4[8 * (IIP_CONF_IP4_REASM_MAX_FRAGS + 2)];
	struct th_ip d = th_ip_default(17);
	uint32_t i;
	long alive;
	th_host_init(&h);
	memset(l4, 0x5a, sizeof(l4));
	alive = th_pkts_alive;
	for (i = 0; i < IIP_CONF_IP4_REASM_MAX_FRAGS; i++)
		send_frag(&h, &d, l4, i * 8, 8, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 0);
	CHECK_EQ(th_pkts_alive, alive + IIP_CONF_IP4_REASM_MAX_FRAGS);
	send_frag(&h, &d, l4, i * 8, 8, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	CHECK_EQ(((struct iip_workspace *) h.ws)->pb_pool.cnt, 1024);
	th_host_fini(&h);
}

/* Memory overall is bounded (IIP_CONF_IP4_REASM_SLOTS): a datagram beyond
 * the slots evicts the oldest one in progress; the others complete. */
TEST(reasm_more_datagrams_than_slots_evicts_the_oldest)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[24], l4[32];
	struct th_ip d = th_ip_default(17);
	uint32_t i;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 12);
	make_udp(l4, payload, sizeof(payload));
	for (i = 0; i <= IIP_CONF_IP4_REASM_SLOTS; i++) {
		d.id = (uint16_t) (100 + i);
		send_frag(&h, &d, l4, 0, 16, 1);
		h.now_ns += 1000000ULL; /* 1 ms apart: the first is the oldest */
	}
	CHECK_EQ(th_stats(&h).rx_ip4_frag_evicted, 1);
	CHECK_EQ(reasm_slots_used(&h), IIP_CONF_IP4_REASM_SLOTS);
	for (i = 1; i <= IIP_CONF_IP4_REASM_SLOTS; i++) {
		d.id = (uint16_t) (100 + i);
		send_frag(&h, &d, l4, 16, 16, 0);
		expect_udp_delivered(&h, i, payload, sizeof(payload));
	}
	/* the evicted first datagram cannot complete any more */
	d.id = 100;
	send_frag(&h, &d, l4, 16, 16, 0);
	CHECK_EQ(h.n_udp, IIP_CONF_IP4_REASM_SLOTS);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_evicted, 1);
	th_host_fini(&h);
}

/* RFC 1122 3.3.2: an incomplete datagram is discarded when its reassembly
 * timer expires (IIP_CONF_IP4_REASM_TIMEOUT_MS), releasing every packet. */
TEST(reasm_timeout_frees_everything)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	long alive;
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 13);
	n = make_udp(l4, payload, sizeof(payload));
	alive = th_pkts_alive;
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	CHECK_EQ(th_pkts_alive, alive + 2);
	th_advance_ms(&h, IIP_CONF_IP4_REASM_TIMEOUT_MS - 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_timeout, 0);
	CHECK_EQ(reasm_slots_used(&h), 1);
	CHECK_EQ(h.next_us, 1000); /* iip_run asks to be called back when the timer runs out */
	th_advance_ms(&h, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_timeout, 1);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	CHECK_EQ(((struct iip_workspace *) h.ws)->pb_pool.cnt, 1024);
	/* the missing middle arrives too late: it starts over, nothing delivered */
	send_frag(&h, &d, l4, 1480, 1480, 1);
	CHECK_EQ(h.n_udp, 0);
	th_host_fini(&h);
}

/* RFC 768 / RFC 1122 4.1.3.4: the UDP checksum of a reassembled datagram
 * covers all of it: a byte flipped in a middle fragment is caught. */
TEST(reasm_udp_checksum_covers_every_fragment)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 14);
	n = make_udp(l4, payload, sizeof(payload));
	l4[2000] ^= 0x01;
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 1);
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 1);
	CHECK_EQ(h.n_udp, 0);
	th_host_fini(&h);
}

/* RFC 791 3.2: fragments are matched on (source, destination, protocol,
 * ID): two datagrams interleaved, one with the same ID from another source,
 * each rebuilt from its own fragments. */
TEST(reasm_interleaved_datagrams_do_not_mix)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t pa[200], pb[200], la[256], lb[256];
	struct th_ip da = th_ip_default(17), db = th_ip_default(17);
	uint32_t na, nb;
	th_host_init(&h);
	fill_pattern(pa, sizeof(pa), 20);
	fill_pattern(pb, sizeof(pb), 90);
	na = make_udp(la, pa, sizeof(pa));
	db.src = 0x0a000004U; /* same ID, another host */
	nb = th_udp(lb, db.src, TH_IP_SELF, 4000, 5000, pb, sizeof(pb));
	send_frag(&h, &da, la, 0, 104, 1);
	send_frag(&h, &db, lb, 104, nb - 104, 0);
	send_frag(&h, &db, lb, 0, 104, 1);
	expect_udp_delivered(&h, 1, pb, sizeof(pb));
	send_frag(&h, &da, la, 104, na - 104, 0);
	expect_udp_delivered(&h, 2, pa, sizeof(pa));
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 0);
	th_host_fini(&h);
}

/* RFC 792 / RFC 1122 3.2.2.6: a fragmented echo request is answered once
 * reassembled; the reply is as long as the request, so it is fragmented
 * itself (RFC 791 3.2), and its reassembly equals the request's data. */
TEST(reasm_fragmented_echo_gets_a_fragmented_reply)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t data[3000], m[3100], out[4000];
	struct th_ip d = th_ip_default(1);
	uint32_t n, nf = 0, len;
	th_host_init(&h);
	fill_pattern(data, sizeof(data), 15);
	n = th_icmp(m, 8, 0, 0xbeef, 77, data, sizeof(data));
	send_frag(&h, &d, m, 0, 1480, 1);
	send_frag(&h, &d, m, 1480, 1480, 1);
	send_frag(&h, &d, m, 2960, n - 2960, 0);
	CHECK_EQ(th_out_count(&h), 3);
	len = collect_fragments(&h, 1, 1500, out, &nf);
	CHECK_EQ(nf, 3);
	check_echo_reply_body(out, len, 0xbeef, 77, data, sizeof(data));
	CHECK_EQ(th_stats(&h).tx_icmp_echo_reply, 1);
	CHECK_EQ(th_stats(&h).tx_ip4_frags, 3);
	th_host_fini(&h);
}

/* RFC 1122 3.2.2.1: a reassembled datagram of an unknown protocol gets a
 * protocol unreachable that quotes the datagram's header as rebuilt (whole
 * length, no fragment bits) and its first data bytes. */
TEST(reasm_unknown_protocol_gets_protocol_unreachable)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t l4[1000], expect[1100];
	struct th_ip d = th_ip_default(253), whole;
	struct th_frame *o;
	uint32_t hl;
	th_host_init(&h);
	fill_pattern(l4, sizeof(l4), 16);
	send_frag(&h, &d, l4, 0, 504, 1);
	send_frag(&h, &d, l4, 504, sizeof(l4) - 504, 0);
	whole = d;
	hl = th_ip4(expect, &whole, sizeof(l4));
	memcpy(expect + hl, l4, sizeof(l4));
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_icmp_error(o, 3, 2, expect, hl + sizeof(l4));
		free(o);
	}
	CHECK_EQ(th_stats(&h).rx_ip4_unknown_proto, 1);
	th_host_fini(&h);
}

/* RFC 791 3.1: the rebuilt datagram, header included, is at most 65535
 * bytes.  Each fragment alone passes that test here (the last one ends at
 * 65515 + 20), but the first one carries a 60-byte header, so the whole
 * would be 65575 bytes: drop it rather than wrap the total-length field. */
TEST(reasm_whole_datagram_beyond_65535_with_first_header_options_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[65515 - 8], l4[65515];
	static const uint8_t nops[40] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
	struct th_ip first = th_ip_default(17), rest = th_ip_default(17);
	long alive;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 17);
	CHECK_EQ(make_udp(l4, payload, sizeof(payload)), sizeof(l4));
	first.opts = nops;
	first.opts_len = sizeof(nops);
	alive = th_pkts_alive;
	send_frag(&h, &rest, l4, 32768, sizeof(l4) - 32768, 0);
	send_frag(&h, &first, l4, 0, 32768, 1);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_bad, 1);
	CHECK_EQ(h.n_udp, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(reasm_slots_used(&h), 0);
	CHECK_EQ(th_pkts_alive, alive);
	th_host_fini(&h);
}

/* RFC 791 3.2: options not "copied" appear in the first fragment only, so
 * fragments of one datagram have different header lengths; each
 * fragment's own header is stripped when the datagram is rebuilt. */
TEST(reasm_fragments_with_different_header_lengths_rebuild_the_datagram)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[200], l4[256];
	static const uint8_t rr[12] = { 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t nops[4] = { 1, 1, 1, 0 };
	struct th_ip first = th_ip_default(17), mid = th_ip_default(17), last = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 18);
	n = make_udp(l4, payload, sizeof(payload));
	first.opts = rr;
	first.opts_len = sizeof(rr);
	mid.opts = nops;
	mid.opts_len = sizeof(nops);
	send_frag(&h, &mid, l4, 64, 64, 1);
	send_frag(&h, &last, l4, 128, n - 128, 0);
	send_frag(&h, &first, l4, 0, 64, 1);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 0);
	th_host_fini(&h);
}

/* RFC 894: short fragments arrive padded to 60 bytes; the padding must
 * not become part of the rebuilt datagram (in the middle it would shift
 * every byte after it). */
static void send_padded_frag(struct th_host *h, const struct th_ip *d, const uint8_t *l4, uint32_t off, uint32_t len, int more)
{
	uint32_t fl = th_build_frag(frame, d, l4, off, len, more);
	CHECK(fl < 60);
	memset(frame + fl, 0xcc, 60 - fl);
	th_run(h, frame, 60);
}

TEST(reasm_padded_short_fragments_are_trimmed)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[64], l4[80];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	fill_pattern(payload, sizeof(payload), 19);
	n = make_udp(l4, payload, sizeof(payload)); /* 72: 8 + 8 + 48 + a last fragment of 8 */
	send_padded_frag(&h, &d, l4, 0, 8, 1);
	send_padded_frag(&h, &d, l4, 8, 8, 1);
	send_frag(&h, &d, l4, 16, 48, 1);
	send_padded_frag(&h, &d, l4, 64, n - 64, 0);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 0);
	th_host_fini(&h);
}

/* The millisecond clock is 32 bits and wraps every 49.7 days; a
 * reassembly begun just before the wrap still expires on time, not at once
 * and not never. */
TEST(reasm_timeout_across_the_clock_wrap)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t payload[64], l4[80];
	struct th_ip d = th_ip_default(17);
	long alive;
	th_host_init(&h);
	h.now_ns = (4294967296ULL - 1000ULL) * 1000000ULL; /* 1 s before the ms clock wraps */
	th_run(&h, NULL, 0);
	fill_pattern(payload, sizeof(payload), 20);
	make_udp(l4, payload, sizeof(payload));
	alive = th_pkts_alive;
	send_frag(&h, &d, l4, 0, 64, 1);
	th_advance_ms(&h, 2000); /* across the wrap */
	CHECK_EQ(th_stats(&h).rx_ip4_frag_timeout, 0);
	CHECK_EQ(reasm_slots_used(&h), 1);
	th_advance_ms(&h, IIP_CONF_IP4_REASM_TIMEOUT_MS - 2000);
	CHECK_EQ(th_stats(&h).rx_ip4_frag_timeout, 1);
	CHECK_EQ(th_pkts_alive, alive);
	th_host_fini(&h);
}

/* A NIC cannot verify the UDP checksum of a fragment, so receive checksum
 * offload does not excuse the stack from checking a rebuilt datagram. */
TEST(reasm_udp_checksum_is_checked_in_software_despite_rx_offload)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	static uint8_t payload[3000], l4[3100];
	struct th_ip d = th_ip_default(17);
	uint32_t n;
	th_host_init(&h);
	h.f_udp_rx_csum = 1;
	fill_pattern(payload, sizeof(payload), 21);
	n = make_udp(l4, payload, sizeof(payload));
	l4[1000] ^= 0x80;
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	CHECK_EQ(th_stats(&h).rx_ip4_reassembled, 1);
	CHECK_EQ(th_stats(&h).rx_udp_bad_csum, 1);
	CHECK_EQ(h.n_udp, 0);
	/* and an intact one passes */
	l4[1000] ^= 0x80;
	d.id++;
	send_frag(&h, &d, l4, 0, 1480, 1);
	send_frag(&h, &d, l4, 1480, 1480, 1);
	send_frag(&h, &d, l4, 2960, n - 2960, 0);
	expect_udp_delivered(&h, 1, payload, sizeof(payload));
	th_host_fini(&h);
}

int main(void)
{
	RUN(reasm_in_order_udp_is_delivered_whole);
	RUN(reasm_reverse_order_udp_is_delivered_whole);
	RUN(reasm_random_order_udp_is_delivered_whole);
	RUN(reasm_exact_duplicate_fragment_is_tolerated);
	RUN(reasm_overlapping_fragments_drop_the_datagram);
	RUN(reasm_oversized_datagram_is_dropped);
	RUN(reasm_whole_datagram_beyond_65535_with_first_header_options_is_dropped);
	RUN(reasm_last_fragment_with_inconsistent_total_is_dropped);
	RUN(reasm_middle_fragment_not_a_multiple_of_8_is_dropped);
	RUN(reasm_tcp_fragment_at_offset_8_is_dropped);
	RUN(reasm_too_many_fragments_drop_the_datagram);
	RUN(reasm_more_datagrams_than_slots_evicts_the_oldest);
	RUN(reasm_timeout_frees_everything);
	RUN(reasm_udp_checksum_covers_every_fragment);
	RUN(reasm_udp_checksum_is_checked_in_software_despite_rx_offload);
	RUN(reasm_interleaved_datagrams_do_not_mix);
	RUN(reasm_fragments_with_different_header_lengths_rebuild_the_datagram);
	RUN(reasm_padded_short_fragments_are_trimmed);
	RUN(reasm_timeout_across_the_clock_wrap);
	RUN(reasm_fragmented_echo_gets_a_fragmented_reply);
	RUN(reasm_unknown_protocol_gets_protocol_unreachable);
	TH_SUMMARY();
}
