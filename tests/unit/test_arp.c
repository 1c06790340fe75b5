/*
 * ARP (RFC 826) at the packet level: what is answered, what is delivered to
 * the application, what is dropped and under which counter, and the exact
 * bytes of every frame the stack sends.
 */
#include "harness.h"

#define TH_IP_OTHER (0x0a000003U) /* 10.0.0.3: on the link, not us */

static const uint8_t mac_zero[6] = { 0, 0, 0, 0, 0, 0 };

/* Checks the 60-byte ARP frame o field by field. */
static void check_arp_frame(const struct th_frame *o, const uint8_t *eth_dst, uint16_t op, const uint8_t *sha, uint32_t spa,
			    const uint8_t *tha, uint32_t tpa)
{
	const uint8_t *a = o->data + 14;
	uint32_t i;
	CHECK_EQ(o->len, 60); /* Ethernet minimum without FCS */
	CHECK(!memcmp(o->data, eth_dst, 6));
	CHECK(!memcmp(o->data + 6, th_mac_self, 6));
	CHECK_EQ(be16_(o->data + 12), 0x0806);
	CHECK_EQ(be16_(a), 1);		/* ar$hrd: Ethernet */
	CHECK_EQ(be16_(a + 2), 0x0800);	/* ar$pro: IPv4 */
	CHECK_EQ(a[4], 6);
	CHECK_EQ(a[5], 4);
	CHECK_EQ(be16_(a + 6), op);
	CHECK(!memcmp(a + 8, sha, 6));
	CHECK_EQ(be32_(a + 14), spa);
	CHECK(!memcmp(a + 18, tha, 6));
	CHECK_EQ(be32_(a + 24), tpa);
	for (i = 14 + 28; i < o->len; i++)
		CHECK_EQ(o->data[i], 0); /* padding carries nothing */
}

/* RFC 826 "Packet reception": ar$op is request and we are the target: swap
 * the fields, put our addresses in the sender fields, send a reply to the asker. */
TEST(arp_request_for_our_address_is_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	struct th_frame *o;
	struct iip_stats s;
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF));
	CHECK_EQ(th_out_count(&h), 1);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_arp_frame(o, th_mac_peer, 2, th_mac_self, TH_IP_SELF, th_mac_peer, TH_IP_PEER);
		free(o);
	}
	CHECK(h.flushes >= 1);
	s = th_stats(&h);
	CHECK_EQ(s.rx_arp, 1);
	CHECK_EQ(s.tx_arp_reply, 1);
	CHECK_EQ(s.rx_arp_malformed, 0);
	CHECK_EQ(h.n_arp_reply, 0); /* a request is not a reply for the application */
	th_host_fini(&h);
}

/* A request sent unicast to our MAC (RFC 826 allows it; Linux re-validates
 * entries this way, RFC 1122 2.3.2.1) is answered the same way. */
TEST(arp_unicast_request_for_our_address_is_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	struct th_frame *o;
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_self, 1, th_mac_peer, TH_IP_PEER, th_mac_self, TH_IP_SELF));
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_arp_frame(o, th_mac_peer, 2, th_mac_self, TH_IP_SELF, th_mac_peer, TH_IP_PEER);
		free(o);
	}
	CHECK_EQ(th_out_count(&h), 0);
	th_host_fini(&h);
}

/* RFC 826: "Am I the target protocol address? No: done" (beyond the merge). */
TEST(arp_request_for_another_address_is_ignored_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	struct iip_stats s;
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_OTHER));
	CHECK_EQ(th_out_count(&h), 0);
	s = th_stats(&h);
	CHECK_EQ(s.rx_arp, 1);
	CHECK_EQ(s.rx_arp_not_for_us, 1);
	CHECK_EQ(s.tx_arp_reply, 0);
	CHECK_EQ(h.n_arp_reply, 0);
	th_host_fini(&h);
}

/* Seed 001: iip_ops_arp_reply is invoked when an ARP reply is received (the
 * table is the integrator's, RFC 826 "merge" happens there). */
TEST(arp_reply_to_us_is_delivered_to_the_application)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	struct iip_stats s;
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_self, 2, th_mac_peer, TH_IP_PEER, th_mac_self, TH_IP_SELF));
	CHECK_EQ(h.n_arp_reply, 1);
	CHECK_EQ(th_out_count(&h), 0); /* a reply is never answered */
	s = th_stats(&h);
	CHECK_EQ(s.rx_arp, 1);
	CHECK_EQ(s.rx_arp_not_for_us, 0);
	CHECK_EQ(s.rx_arp_malformed, 0);
	th_host_fini(&h);
}

/* A reply between two other hosts (seen on a promiscuous NIC via broadcast)
 * is not ours: not delivered, counted. */
TEST(arp_reply_for_another_host_is_not_delivered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 2, th_mac_peer, TH_IP_PEER, th_mac_peer, TH_IP_OTHER));
	CHECK_EQ(h.n_arp_reply, 0);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_arp_not_for_us, 1);
	th_host_fini(&h);
}

/* Gratuitous ARP (RFC 5227 2.4 announcement in reply form, RFC 826 merge):
 * sender and target protocol addresses are the sender's own, broadcast; the
 * application sees it so its table can be updated.  Nothing is sent. */
TEST(arp_gratuitous_reply_is_delivered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 2, th_mac_peer, TH_IP_PEER, th_mac_bcast, TH_IP_PEER));
	CHECK_EQ(h.n_arp_reply, 1);
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_arp_not_for_us, 0);
	th_host_fini(&h);
}

/* A gratuitous request (RFC 5227 announcement) targets the sender itself:
 * it must never be answered. */
TEST(arp_gratuitous_request_is_not_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_PEER));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_arp_reply, 0);
	CHECK_EQ(th_stats(&h).rx_arp_not_for_us, 1);
	th_host_fini(&h);
}

/* Runs one malformed variant of a request for our address: it must be
 * dropped under rx_arp_malformed with no reply. */
static void expect_malformed(struct th_host *h, const uint8_t *f, uint32_t len, unsigned long *malformed)
{
	struct iip_stats s;
	th_run(h, f, len);
	s = th_stats(h);
	CHECK_EQ(th_out_count(h), 0);
	CHECK_EQ(s.tx_arp_reply, 0);
	CHECK_EQ(s.rx_arp_malformed, *malformed + 1);
	CHECK_EQ(h->n_arp_reply, 0);
	*malformed = s.rx_arp_malformed;
	th_drain(h);
}

/* RFC 826: the fixed header and both address pairs must be there. */
TEST(arp_truncated_message_is_dropped_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	unsigned long m = 0;
	th_host_init(&h);
	th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
	expect_malformed(&h, f, 14 + 27, &m);	/* one byte of the target address missing */
	expect_malformed(&h, f, 14 + 7, &m);	/* not even the fixed header */
	expect_malformed(&h, f, 14, &m);	/* Ethernet header only */
	th_host_fini(&h);
}

/* RFC 826: "?Do I have the hardware type in ar$hrd? ... [optionally check
 * the hardware length ar$hln] ?Do I speak the protocol in ar$pro?" */
TEST(arp_bad_hw_or_proto_length_is_dropped_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	unsigned long m = 0;
	th_host_init(&h);
	th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
	f[14 + 4] = 8;	/* ar$hln: not our link's 6 */
	expect_malformed(&h, f, 60, &m);
	f[14 + 4] = 0;
	expect_malformed(&h, f, 60, &m);
	f[14 + 4] = 6;
	f[14 + 5] = 16;	/* ar$pln: IPv6-sized */
	expect_malformed(&h, f, 60, &m);
	f[14 + 5] = 0;
	expect_malformed(&h, f, 60, &m);
	th_host_fini(&h);
}

TEST(arp_bad_proto_type_is_dropped_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	unsigned long m = 0;
	th_host_init(&h);
	th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
	put16_(f + 14 + 2, 0x86dd);	/* ar$pro: IPv6 */
	expect_malformed(&h, f, 60, &m);
	th_host_fini(&h);
}

/* RFC 826: a hardware type we do not have ("Yes: (almost definitely)") is not ours. */
TEST(arp_bad_hw_type_is_dropped_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	unsigned long m = 0;
	th_host_init(&h);
	th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
	put16_(f + 14, 6);	/* ar$hrd: IEEE 802 networks, not Ethernet (1) */
	expect_malformed(&h, f, 60, &m);
	th_host_fini(&h);
}

/* Only request (1) and reply (2) exist in RFC 826; RARP (3, 4) and others are not ARP. */
TEST(arp_unknown_op_is_dropped_and_counted)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	unsigned long m = 0;
	uint16_t ops[] = { 0, 3, 4, 0xffff };
	uint32_t i;
	th_host_init(&h);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		th_build_arp(f, th_mac_bcast, ops[i], th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
		expect_malformed(&h, f, 60, &m);
	}
	th_host_fini(&h);
}

/* An ARP message of 42 bytes (no Ethernet padding, as sent by a host that
 * lets the NIC pad) is complete and answered. */
TEST(arp_unpadded_request_is_answered)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	struct th_frame *o;
	th_host_init(&h);
	th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF);
	th_run(&h, f, 42);
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_arp_frame(o, th_mac_peer, 2, th_mac_self, TH_IP_SELF, th_mac_peer, TH_IP_PEER);
		free(o);
	}
	th_host_fini(&h);
}

/* Seed 001 iip_arp_request, RFC 826 "Packet Generation": a broadcast request
 * with our addresses as sender, the target IP, an unknown (zero) target MAC. */
TEST(arp_request_api_sends_a_broadcast_request)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	struct th_frame *o;
	th_host_init(&h);
	th_run(&h, NULL, 0); /* the workspace is used through iip_run first, as integrators do */
	iip_arp_request(h.ws, h.mac, h.ip_be, htonl_(TH_IP_PEER), h.opaque);
	CHECK_EQ(th_out_count(&h), 1);
	CHECK_EQ(h.flushes, 1); /* outside iip_run: flushed at once */
	o = th_pop(&h);
	CHECK(o != NULL);
	if (o) {
		check_arp_frame(o, th_mac_bcast, 1, th_mac_self, TH_IP_SELF, mac_zero, TH_IP_PEER);
		free(o);
	}
	CHECK_EQ(th_stats(&h).tx_arp_request, 1);
	th_host_fini(&h);
}

/* No packet to build the request in: nothing sent, counted, nothing leaked. */
TEST(arp_request_api_without_packets_sends_nothing)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	th_host_init(&h);
	th_run(&h, NULL, 0);
	h.alloc_fail = 1;
	iip_arp_request(h.ws, h.mac, h.ip_be, htonl_(TH_IP_PEER), h.opaque);
	h.alloc_fail = 0;
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_arp_request, 0);
	CHECK_EQ(th_stats(&h).pkt_alloc_failed, 1);
	th_host_fini(&h);
}

/* A request for us that arrives while no packet can be allocated is not
 * answered, and the received frame is still freed. */
TEST(arp_reply_without_packets_is_skipped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	th_host_init(&h);
	h.alloc_fail = 1;
	th_run(&h, f, th_build_arp(f, th_mac_bcast, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF));
	h.alloc_fail = 0;
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).tx_arp_reply, 0);
	CHECK_EQ(th_stats(&h).pkt_alloc_failed, 1);
	th_host_fini(&h);
}

/* IEEE 802.3: a unicast frame for another station is not ours, ARP included. */
TEST(arp_frame_for_another_mac_is_dropped)
{
	static struct th_host h; /* static: 1 MB each, too big for the stack once inlined */
	uint8_t f[64];
	static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0x03 };
	th_host_init(&h);
	th_run(&h, f, th_build_arp(f, other, 1, th_mac_peer, TH_IP_PEER, mac_zero, TH_IP_SELF));
	CHECK_EQ(th_out_count(&h), 0);
	CHECK_EQ(th_stats(&h).rx_l2_not_for_us, 1);
	CHECK_EQ(th_stats(&h).rx_arp, 0);
	th_host_fini(&h);
}

int main(void)
{
	RUN(arp_request_for_our_address_is_answered);
	RUN(arp_unicast_request_for_our_address_is_answered);
	RUN(arp_request_for_another_address_is_ignored_and_counted);
	RUN(arp_reply_to_us_is_delivered_to_the_application);
	RUN(arp_reply_for_another_host_is_not_delivered);
	RUN(arp_gratuitous_reply_is_delivered);
	RUN(arp_gratuitous_request_is_not_answered);
	RUN(arp_truncated_message_is_dropped_and_counted);
	RUN(arp_bad_hw_or_proto_length_is_dropped_and_counted);
	RUN(arp_bad_proto_type_is_dropped_and_counted);
	RUN(arp_bad_hw_type_is_dropped_and_counted);
	RUN(arp_unknown_op_is_dropped_and_counted);
	RUN(arp_unpadded_request_is_answered);
	RUN(arp_request_api_sends_a_broadcast_request);
	RUN(arp_request_api_without_packets_sends_nothing);
	RUN(arp_reply_without_packets_is_skipped);
	RUN(arp_frame_for_another_mac_is_dropped);
	TH_SUMMARY();
}
