/*
 * fuzz_host.h: a lean host for fuzzing the stack.  It differs from
 * tests/unit/harness.h where fuzzing needs it:
 *
 *  - every buffer is malloc'd at its exact size (received frames, the app's
 *    payloads) or at a realistic data room (packets the stack allocates), so
 *    AddressSanitizer sees any byte read or written past a packet;
 *  - nothing is kept of the frames the stack sends but a small ring of TCP
 *    headers (the scripted peer reads ISNs and timestamps from it), and each
 *    frame is checked on the way out (lengths, checksums, offload marks);
 *  - the application behaves like a real one (accepts, consumes, echoes,
 *    closes on FIN, streams more on ACKs), as flags the input toggles, and
 *    checks the API contract (no callback for a handle it was told is
 *    closed, offsets within the payload);
 *  - the stack's accounting (packet wrappers, connection objects) is checked
 *    after every step and, after the workspace is torn down, every packet
 *    must be freed.  Any violation abort()s, which the fuzzer reports.
 */
#ifndef TESTS_FUZZ_FUZZ_HOST_H
#define TESTS_FUZZ_FUZZ_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/*
 * FUZZ_SMALL_LIMITS: a second build with tiny pools and queues, so that the
 * fuzzer reaches the edges (zero receive window, full send queue, out-of-order
 * and reassembly limits, SYN backlog) within a few packets.  The code paths
 * are the same; only the numbers differ.
 */
#ifdef FUZZ_SMALL_LIMITS
#define IIP_CONF_TCP_CONN_HT_SIZE (16)
#define IIP_CONF_TCP_RX_BUF_PKTS (8)
#define IIP_CONF_TCP_OOO_MAX_PKTS (4)
#define IIP_CONF_TCP_TX_QUEUE_PKTS (8)
#define IIP_CONF_TCP_SYN_BACKLOG (3)
#define IIP_CONF_IP4_REASM_SLOTS (2)
#define IIP_CONF_IP4_REASM_MAX_FRAGS (6)
#define IIP_CONF_TCP_CHALLENGE_ACK_LIMIT (3)
#define IIP_CONF_ICMP_RATE_BURST (2)
#endif

#include "../../stack/main.c"
#include "fuzz_input.h"

/*
 * The host's own loops (checksums over every frame sent, accounting walks)
 * are not what the fuzzer should steer by: no coverage feedback from them,
 * which also keeps them fast.
 */
#if defined(__clang__)
#define FZ_NO_COV __attribute__((no_sanitize("coverage")))
#else
#define FZ_NO_COV
#endif

#define FZ_FAIL(...) \
	do { \
		fprintf(stderr, "fuzz: "); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		abort(); \
	} while (0)

/* ---------- packets: refcounted buffers, one descriptor per reference ---------- */

struct fz_buf {
	int ref;
	uint32_t size;
	uint8_t *mem;		/* exactly size bytes */
};

struct fz_pkt {
	struct fz_buf *buf;
	uint8_t *data;
	uint16_t len;
	struct fz_pkt *next;	/* scatter-gather chain */
	uint8_t ol_ip4_csum, ol_tcp_csum, ol_udp_csum, ol_tso;
	uint8_t rx_csum_bad;	/* the "NIC" found a bad checksum */
	uint8_t l2_skip;	/* the link layer keeps this frame to itself */
};

static long fz_pkts_alive;
static int fz_trace;	/* replayer with FUZZ_TRACE set: print what happens */

/* A packet whose buffer holds room bytes and whose data starts at head. */
static struct fz_pkt *fz_pkt_new(uint32_t room, uint32_t head)
{
	struct fz_pkt *p = (struct fz_pkt *) calloc(1, sizeof(*p));
	p->buf = (struct fz_buf *) calloc(1, sizeof(*p->buf));
	p->buf->ref = 1;
	p->buf->size = room;
	p->buf->mem = (uint8_t *) malloc(room ? room : 1);
	p->data = p->buf->mem + head;
	fz_pkts_alive++;
	return p;
}

static void fz_pkt_free(struct fz_pkt *p)
{
	while (p) {
		struct fz_pkt *n = p->next;
		if (--p->buf->ref == 0) {
			free(p->buf->mem);
			free(p->buf);
		}
		free(p);
		fz_pkts_alive--;
		p = n;
	}
}

FZ_NO_COV static uint32_t fz_pkt_total(const struct fz_pkt *p)
{
	uint32_t n = 0;
	for (; p; p = p->next)
		n += p->len;
	return n;
}

/* Copies the chain into out (at most max bytes); returns the bytes copied. */
FZ_NO_COV static uint32_t fz_pkt_linearize(const struct fz_pkt *p, uint8_t *out, uint32_t max)
{
	uint32_t n = 0;
	for (; p && n < max; p = p->next) {
		uint32_t k = p->len < max - n ? p->len : max - n;
		memcpy(out + n, p->data, k);
		n += k;
	}
	return n;
}

/* ---------- the host ---------- */

#define FZ_HEADROOM (130)	/* IP header 4-byte aligned after a 14-byte Ethernet header */
#define FZ_MAX_HANDLES (256)
#define FZ_RING (64)
#define FZ_SEND_BUDGET (64)	/* app-initiated sends per input, so work stays bounded */

static const uint8_t fz_mac_self[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t fz_mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x02 };
#define FZ_IP_SELF (0x0a000001U)	/* 10.0.0.1 */
#define FZ_IP_PEER (0x0a000002U)	/* 10.0.0.2 */
#define FZ_IP_PEER2 (0x0a000003U)	/* 10.0.0.3 */

/* A TCP segment the stack sent, as the scripted peer needs it. */
struct fz_seen {
	uint32_t peer_ip;	/* host order: the segment's destination */
	uint16_t sport, dport;	/* host order */
	uint32_t seq, ack;
	uint8_t flags;
	uint8_t has_ts;
	uint32_t tsval;
};

struct fz_host {
	void *ws;
	void *opaque[3];
	uint8_t mac[6];
	uint32_t ip_be;
	uint64_t now_ns;
	uint32_t next_us;
	uint16_t mtu;
	uint32_t tx_room;	/* data room of the packets the stack allocates */
	uint8_t feat;
	uint8_t app;
	uint8_t cubic;		/* the app sets CUBIC on every connection */
	uint32_t alloc_fail_every;	/* 0: never; else every n-th alloc/clone fails */
	uint32_t alloc_count;
	uint32_t send_budget;
	void *handles[FZ_MAX_HANDLES];	/* connections the app was told about and not yet closed */
	uint32_t rx_next[FZ_MAX_HANDLES];	/* sequence number of the next byte the app expects */
	uint8_t rx_started[FZ_MAX_HANDLES];	/* ... once the first byte arrived */
	uint32_t n_handles;
	uint8_t raw_tcp;	/* the input sent raw TCP frames: payload bytes are the fuzzer's */
	struct fz_seen seen[FZ_RING];
	uint32_t n_seen;
	uint32_t frames_out;
	void **conn_mem;
	uint32_t n_conn;
	void **pb_mem;
	uint32_t n_pb;
};

static struct fz_host *fz_host_of(void *opaque)
{
	return (struct fz_host *) ((void **) opaque)[0];
}

FZ_NO_COV static int fz_handle_index(struct fz_host *h, void *handle)
{
	uint32_t i;
	for (i = 0; i < h->n_handles; i++)
		if (h->handles[i] == handle)
			return (int) i;
	return -1;
}

static void fz_handle_add(struct fz_host *h, void *handle)
{
	if (fz_handle_index(h, handle) >= 0)
		FZ_FAIL("connection %p announced twice (accepted/connected) without closed", handle);
	if (h->n_handles < FZ_MAX_HANDLES) {
		h->rx_started[h->n_handles] = 0;
		h->handles[h->n_handles++] = handle;
	}
}

/* A handle the app may use: the stack must still run the connection. */
static void fz_handle_check(struct fz_host *h, void *handle, const char *what)
{
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) handle;
	if (fz_handle_index(h, handle) < 0)
		FZ_FAIL("%s: callback for a connection the app was told is closed (or never opened)", what);
	if (c->state == IIP_TCP_STATE_CLOSED || c->state == IIP_TCP_STATE_TIME_WAIT || !c->app_notified)
		FZ_FAIL("%s: connection in state %u (app_notified %u) was never reported closed", what, c->state, c->app_notified);
}

static uint8_t fz_alloc_fails(struct fz_host *h)
{
	h->alloc_count++;
	return h->alloc_fail_every && h->alloc_count % h->alloc_fail_every == 0;
}

/* An application payload packet of len bytes, filled with a pattern. */
static struct fz_pkt *fz_app_pkt(uint32_t len, uint8_t seed)
{
	struct fz_pkt *p = fz_pkt_new(len, 0);
	memset(p->data, seed, len);
	p->len = (uint16_t) len;
	return p;
}

FZ_NO_COV static void fz_fill_seq(uint8_t *p, uint32_t len, uint32_t seq)
{
	uint32_t i;
	for (i = 0; i < len; i++)
		p[i] = (uint8_t) (seq + i);
}

/* The app sends len bytes on a connection; a refused packet stays the app's. */
static void fz_app_tcp_send(struct fz_host *h, void *handle, uint32_t len, uint16_t flags)
{
	struct fz_pkt *p;
	if (!h->send_budget)
		return;
	h->send_budget--;
	p = fz_pkt_new(len, 0);
	p->len = (uint16_t) len;
	/* byte k of the stream is the low byte of its sequence number: every
	 * segment the stack sends is checked against it (iip_ops_l2_push) */
	fz_fill_seq(p->data, len, ((struct iip_tcp_conn *) handle)->snd_queued);
	if (flags & 0x80) /* not a TCP flag: the app (wrongly) hands over a chain */
		p->next = fz_app_pkt(10, 0);
	if (iip_tcp_send(h->ws, handle, p, flags, h->opaque) != 0)
		fz_pkt_free(p);
}

/* ---------- callbacks: packets ---------- */

static void *iip_ops_pkt_alloc(void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	if (fz_alloc_fails(h))
		return NULL;
	return fz_pkt_new(h->tx_room, FZ_HEADROOM);
}
static void iip_ops_pkt_free(void *pkt, void *opaque) { (void) opaque; fz_pkt_free((struct fz_pkt *) pkt); }
static void *iip_ops_pkt_get_data(void *pkt, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt)->data; }
static uint16_t iip_ops_pkt_get_len(void *pkt, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt)->len; }
static void iip_ops_pkt_set_len(void *pkt, uint16_t len, void *opaque)
{
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	(void) opaque;
	if ((uint32_t) (p->data - p->buf->mem) + len > p->buf->size)
		FZ_FAIL("set_len %u beyond the buffer (room %u after data)", len, (unsigned) (p->buf->size - (uint32_t) (p->data - p->buf->mem)));
	p->len = len;
}
static void iip_ops_pkt_increment_head(void *pkt, uint16_t len, void *opaque)
{
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	(void) opaque;
	if (len > p->len)
		FZ_FAIL("increment_head %u beyond length %u", len, p->len);
	p->data += len;
	p->len = (uint16_t) (p->len - len);
}
static void iip_ops_pkt_decrement_tail(void *pkt, uint16_t len, void *opaque)
{
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	(void) opaque;
	if (len > p->len)
		FZ_FAIL("decrement_tail %u beyond length %u", len, p->len);
	p->len = (uint16_t) (p->len - len);
}
static void *iip_ops_pkt_clone(void *pkt, void *opaque)
{
	struct fz_pkt *src = (struct fz_pkt *) pkt, *head = NULL, **tail = &head;
	if (fz_alloc_fails(fz_host_of(opaque)))
		return NULL;
	for (; src; src = src->next) {
		struct fz_pkt *c = (struct fz_pkt *) calloc(1, sizeof(*c));
		*c = *src;
		c->next = NULL;
		c->buf->ref++;
		fz_pkts_alive++;
		*tail = c;
		tail = &c->next;
	}
	return head;
}
static void iip_ops_pkt_scatter_gather_chain_append(void *pkt_head, void *pkt_tail, void *opaque)
{
	struct fz_pkt *p = (struct fz_pkt *) pkt_head;
	(void) opaque;
	if (pkt_head == pkt_tail)
		FZ_FAIL("chain_append of a packet to itself");
	while (p->next)
		p = p->next;
	p->next = (struct fz_pkt *) pkt_tail;
}
static void *iip_ops_pkt_scatter_gather_chain_get_next(void *pkt_head, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt_head)->next; }

static void iip_ops_util_now_ns(uint32_t t[3], void *opaque)
{
	uint64_t ns = fz_host_of(opaque)->now_ns;
	uint64_t sec = ns / 1000000000ULL;
	t[0] = (uint32_t) (sec >> 32);
	t[1] = (uint32_t) sec;
	t[2] = (uint32_t) (ns % 1000000000ULL);
}

/* ---------- callbacks: link layer ---------- */

static uint16_t iip_ops_l2_hdr_len(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 14; }
static uint8_t *iip_ops_l2_hdr_src_ptr(void *pkt, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt)->data + 6; }
static uint8_t *iip_ops_l2_hdr_dst_ptr(void *pkt, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt)->data; }
static uint16_t iip_ops_l2_ethertype_be(void *pkt, void *opaque)
{
	uint16_t v;
	(void) opaque;
	memcpy(&v, ((struct fz_pkt *) pkt)->data + 12, 2);
	return v;
}
static uint16_t iip_ops_l2_addr_len(void *opaque) { (void) opaque; return 6; }
static void iip_ops_l2_broadcast_addr(uint8_t bcaddr[], void *opaque) { (void) opaque; memset(bcaddr, 0xff, 6); }
static void iip_ops_l2_hdr_craft(void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype_be, void *opaque)
{
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	(void) opaque;
	if ((uint32_t) (p->data - p->buf->mem) + 14 > p->buf->size)
		FZ_FAIL("hdr_craft: no room for the link header");
	memcpy(p->data, dst, 6);
	memcpy(p->data + 6, src, 6);
	memcpy(p->data + 12, &ethertype_be, 2);
}
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque) { (void) opaque; return ((struct fz_pkt *) pkt)->l2_skip; }
static void iip_ops_l2_flush(void *opaque) { (void) opaque; }
static uint8_t iip_ops_arp_lhw(void *opaque) { (void) opaque; return 6; }
static uint8_t iip_ops_arp_lproto(void *opaque) { (void) opaque; return 4; }

static uint16_t fz_be16(const uint8_t *p) { return (uint16_t) ((p[0] << 8) | p[1]); }
static uint32_t fz_be32(const uint8_t *p) { return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3]; }
static void fz_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v; }
static void fz_put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v; }

/* Plain RFC 1071 sum, independent of the stack's. */
FZ_NO_COV static uint32_t fz_sum(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint32_t i;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t) ((p[i] << 8) | p[i + 1]);
	if (len & 1)
		sum += (uint32_t) (p[len - 1] << 8);
	return sum;
}
static uint16_t fz_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) ~sum;
}
/* The folded, not inverted sum: what an offloading NIC expects in the field. */
static uint16_t fz_folded(uint32_t sum)
{
	return (uint16_t) ~fz_fold(sum);
}
static uint32_t fz_pseudo(const uint8_t *ip, uint8_t proto, uint32_t l4_len)
{
	return fz_sum(ip + 12, 8, 0) + proto + l4_len;
}

static uint8_t fz_out_buf[70000];

/* Every frame the stack sends is checked here, then freed. */
FZ_NO_COV static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	uint32_t total = fz_pkt_total(p);
	uint32_t n;
	const uint8_t *f = fz_out_buf, *ip;
	h->frames_out++;
	if (total > sizeof(fz_out_buf))
		FZ_FAIL("frame of %u bytes", total);
	n = fz_pkt_linearize(p, fz_out_buf, sizeof(fz_out_buf));
	if (n < 14)
		FZ_FAIL("frame of %u bytes: no link header", n);
	if (p->next && !(h->feat & FZ_F_SG))
		FZ_FAIL("chained frame without scatter-gather");
	if (p->ol_tso && !(h->feat & FZ_F_TSO))
		FZ_FAIL("TSO mark without the TSO feature");
	if (p->ol_ip4_csum && !(h->feat & FZ_F_IP4_TX))
		FZ_FAIL("IPv4 checksum offload mark without the feature");
	if (p->ol_tcp_csum && !(h->feat & FZ_F_TCP_TX))
		FZ_FAIL("TCP checksum offload mark without the feature");
	if (p->ol_udp_csum && !(h->feat & FZ_F_UDP_TX))
		FZ_FAIL("UDP checksum offload mark without the feature");
	if (n > 14U + h->mtu && !p->ol_tso)
		FZ_FAIL("frame of %u bytes exceeds the MTU %u", n, h->mtu);
	if (fz_be16(f + 12) == 0x0806) {
		if (fz_trace)
			printf("    stack sent ARP op %u\n", fz_be16(f + 20));
		if (n < 42)
			FZ_FAIL("short ARP frame (%u bytes)", n);
	} else if (fz_be16(f + 12) == 0x0800) {
		uint32_t ihl, tot, l4_len;
		uint16_t frag;
		ip = f + 14;
		if (n < 34)
			FZ_FAIL("short IPv4 frame (%u bytes)", n);
		ihl = (uint32_t) (ip[0] & 15) * 4;
		tot = fz_be16(ip + 2);
		if ((ip[0] >> 4) != 4 || ihl < 20 || tot != n - 14 || tot < ihl)
			FZ_FAIL("IPv4 header: version/ihl 0x%02x, total length %u, frame %u", ip[0], tot, n);
		if (!p->ol_ip4_csum && fz_fold(fz_sum(ip, ihl, 0)) != 0)
			FZ_FAIL("bad IPv4 header checksum");
		frag = fz_be16(ip + 6);
		l4_len = tot - ihl;
		if (ip[9] == 6) {
			const uint8_t *t = ip + ihl;
			struct fz_seen *s;
			uint32_t thl, i;
			if (l4_len < 20 || (thl = (uint32_t) (t[12] >> 4) * 4) < 20 || thl > l4_len)
				FZ_FAIL("malformed TCP segment sent (l4 %u)", l4_len);
			if (p->ol_tcp_csum) {
				if (fz_be16(t + 16) != fz_folded(fz_pseudo(ip, 6, l4_len)))
					FZ_FAIL("offloaded TCP checksum field does not hold the pseudo-header sum");
			} else if (fz_fold(fz_sum(t, l4_len, fz_pseudo(ip, 6, l4_len))) != 0)
				FZ_FAIL("bad TCP checksum");
			s = &h->seen[h->n_seen++ % FZ_RING];
			memset(s, 0, sizeof(*s));
			s->peer_ip = fz_be32(ip + 16);
			s->sport = fz_be16(t);
			s->dport = fz_be16(t + 2);
			s->seq = fz_be32(t + 4);
			s->ack = fz_be32(t + 8);
			s->flags = t[13];
			if (fz_trace)
				printf("    stack sent %u -> %u flags 0x%02x seq %u ack %u win %u options %u payload %u%s\n", s->sport, s->dport,
				       s->flags, s->seq, s->ack, fz_be16(t + 14), thl - 20, l4_len - thl, p->ol_tso ? " (TSO)" : "");
			for (i = thl; i < l4_len; i++)
				if (t[i] != (uint8_t) (s->seq + ((s->flags & IIP_TCP_FLAG_SYN) ? 1 : 0) + i - thl))
					FZ_FAIL("TCP payload byte at sequence %u is 0x%02x, the app queued 0x%02x there",
						s->seq + i - thl, t[i], (uint8_t) (s->seq + i - thl));
			for (i = 20; i < thl;) {
				if (t[i] == 0)
					break;
				if (t[i] == 1) {
					i++;
					continue;
				}
				if (i + 1 >= thl || t[i + 1] < 2 || i + t[i + 1] > thl)
					FZ_FAIL("malformed TCP option sent");
				if (t[i] == 8 && t[i + 1] == 10) {
					s->has_ts = 1;
					s->tsval = fz_be32(t + i + 2);
				}
				i += t[i + 1];
			}
		} else if (fz_trace)
			printf("    stack sent IPv4 proto %u, %u bytes, fragment field 0x%04x\n", ip[9], tot, frag);
		if (ip[9] == 17 && !(frag & 0x3fff)) {
			const uint8_t *u = ip + ihl;
			if (l4_len < 8 || fz_be16(u + 4) != l4_len)
				FZ_FAIL("UDP length %u, datagram %u", l4_len >= 8 ? fz_be16(u + 4) : 0, l4_len);
			if (p->ol_udp_csum) {
				if (fz_be16(u + 6) != fz_folded(fz_pseudo(ip, 17, l4_len)))
					FZ_FAIL("offloaded UDP checksum field does not hold the pseudo-header sum");
			} else if (fz_be16(u + 6) && fz_fold(fz_sum(u, l4_len, fz_pseudo(ip, 17, l4_len))) != 0)
				FZ_FAIL("bad UDP checksum");
		} else if (ip[9] == 1 && !(frag & 0x3fff)) {
			if (l4_len < 8 || fz_fold(fz_sum(ip + ihl, l4_len, 0)) != 0)
				FZ_FAIL("bad ICMP message (%u bytes)", l4_len);
		}
	} else
		FZ_FAIL("frame with ethertype 0x%04x sent", fz_be16(f + 12));
	fz_pkt_free(p);
}

/* ---------- callbacks: NIC features ---------- */

static uint8_t iip_ops_nic_feature_offload_tx_scatter_gather(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_SG) != 0; }
static uint8_t iip_ops_nic_feature_offload_ip4_rx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_IP4_RX) != 0; }
static uint8_t iip_ops_nic_feature_offload_ip4_tx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_IP4_TX) != 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_rx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_TCP_RX) != 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_TCP_TX) != 0; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_tso(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_TSO) != 0; }
static uint8_t iip_ops_nic_feature_offload_udp_rx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_UDP_RX) != 0; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_checksum(void *opaque) { return (fz_host_of(opaque)->feat & FZ_F_UDP_TX) != 0; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_tso(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_offload_ip4_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct fz_pkt *) pkt)->rx_csum_bad; }
static uint8_t iip_ops_nic_offload_tcp_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct fz_pkt *) pkt)->rx_csum_bad; }
static uint8_t iip_ops_nic_offload_udp_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct fz_pkt *) pkt)->rx_csum_bad; }
static void iip_ops_nic_offload_ip4_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct fz_pkt *) pkt)->ol_ip4_csum = 1; }
static void iip_ops_nic_offload_tcp_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct fz_pkt *) pkt)->ol_tcp_csum = 1; }
static void iip_ops_nic_offload_tcp_tx_tso_mark(void *pkt, void *opaque) { (void) opaque; ((struct fz_pkt *) pkt)->ol_tso = 1; }
static void iip_ops_nic_offload_udp_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct fz_pkt *) pkt)->ol_udp_csum = 1; }
static void iip_ops_nic_offload_udp_tx_tso_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; FZ_FAIL("UDP TSO mark: the feature is never offered"); }

/* ---------- callbacks: the application ---------- */

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	(void) context;
	/* a real app reads the sender's addresses into its ARP table */
	if (iip_ops_pkt_get_len(pkt, opaque) < 14 + 28)
		FZ_FAIL("ARP reply shorter than its addresses");
	(void) PB_ARP_IP_SENDER(pkt)[3];
}

static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	(void) context;
	(void) PB_ICMP(pkt)->echo.seq_be;
	(void) opaque;
}

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	(void) context;
	return (h->app & FZ_A_ACCEPT) || __iip_ntohs(PB_TCP(pkt)->dst_be) == 80;
}

static void fz_app_opened(struct fz_host *h, void *handle)
{
	fz_handle_add(h, handle);
	if (h->cubic)
		iip_tcp_set_cc(h->ws, handle, IIP_TCP_CC_CUBIC);
	if (h->app & FZ_A_GREET)
		fz_app_tcp_send(h, handle, 100, IIP_TCP_FLAG_PSH);
	if (h->app & FZ_A_CLOSE_EARLY)
		iip_tcp_close(h->ws, handle, h->opaque);
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	(void) context; (void) pkt;
	fz_app_opened(h, handle);
	return h;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	(void) context; (void) pkt;
	fz_app_opened(h, handle);
	return h;
}

/*
 * What the app receives must be the peer's byte stream: each delivery starts
 * where the previous one ended (no byte lost, none twice), and, unless the
 * input sent raw TCP frames, every byte holds the value the harness gives
 * the byte at that sequence number ((uint8_t) seq, see fz_build_tcp).
 */
FZ_NO_COV static void fz_check_stream(struct fz_host *h, int i, void *pkt, const uint8_t *payload, uint32_t head_off, uint32_t n)
{
	void *opaque = h->opaque;
	uint32_t first = __iip_ntohl(PB_TCP(pkt)->seq_be) + (PB_TCP_HDR_HAS_SYN(pkt) ? 1 : 0) + head_off, k;
	if (!n || i < 0)
		return;
	if (h->rx_started[i] && first != h->rx_next[i])
		FZ_FAIL("tcp_payload: delivery starts at sequence %u, the stream is at %u", first, h->rx_next[i]);
	h->rx_started[i] = 1;
	h->rx_next[i] = first + n;
	if (h->raw_tcp)
		return;
	for (k = 0; k < n; k++)
		if (payload[head_off + k] != (uint8_t) (first + k))
			FZ_FAIL("tcp_payload: byte at sequence %u is 0x%02x, the peer sent 0x%02x", first + k, payload[head_off + k], (uint8_t) (first + k));
}

static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off, uint16_t tail_off, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	uint32_t off, plen, total, n;
	(void) context;
	fz_handle_check(h, handle, "tcp_payload");
	if (tcp_opaque != h)
		FZ_FAIL("tcp_payload: wrong tcp_opaque");
	off = (uint32_t) (PB_TCP_PAYLOAD(pkt) - p->data);
	plen = PB_TCP_PAYLOAD_LEN(pkt);
	total = fz_pkt_total(p);
	if (off + plen > total)
		FZ_FAIL("tcp_payload: payload [%u, %u) beyond the packet (%u bytes)", off, off + plen, total);
	if ((uint32_t) head_off + tail_off > plen)
		FZ_FAIL("tcp_payload: head_off %u + tail_off %u > payload %u", head_off, tail_off, plen);
	n = plen - head_off - tail_off;
	fz_pkt_linearize(p, fz_out_buf, sizeof(fz_out_buf)); /* the app reads every byte */
	fz_check_stream(h, fz_handle_index(h, handle), pkt, fz_out_buf + off, head_off, n);
	if ((h->app & FZ_A_ECHO) && n)
		fz_app_tcp_send(h, handle, n, IIP_TCP_FLAG_PSH); /* as many bytes back */
	if (h->app & FZ_A_CONSUME)
		iip_tcp_rxbuf_consumed(h->ws, handle, 1, h->opaque);
	if ((h->app & FZ_A_CLOSE_ON_FIN) && PB_TCP_HDR_HAS_FIN(pkt))
		iip_tcp_close(h->ws, handle, h->opaque);
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	(void) context;
	fz_handle_check(h, handle, "tcp_acked");
	if (tcp_opaque != h)
		FZ_FAIL("tcp_acked: wrong tcp_opaque");
	if (p->len)
		(void) p->data[p->len - 1]; /* the app may look at what it sent */
	if (h->app & FZ_A_STREAM)
		fz_app_tcp_send(h, handle, 1000, 0);
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be, uint8_t peer_mac[],
			       uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	int i = fz_handle_index(h, handle);
	(void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac; (void) peer_ip4_be; (void) peer_port_be;
	if (i < 0) {
		/* only an active open that never connected is unknown to the app */
		if (tcp_opaque != NULL)
			FZ_FAIL("tcp_closed twice, or for a connection never announced");
		return;
	}
	if (tcp_opaque != h)
		FZ_FAIL("tcp_closed: wrong tcp_opaque");
	--h->n_handles;
	h->handles[i] = h->handles[h->n_handles];
	h->rx_next[i] = h->rx_next[h->n_handles];
	h->rx_started[i] = h->rx_started[h->n_handles];
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	struct fz_host *h = fz_host_of(opaque);
	struct fz_pkt *p = (struct fz_pkt *) pkt;
	uint32_t off = (uint32_t) (PB_UDP_PAYLOAD(pkt) - p->data), n = PB_UDP_PAYLOAD_LEN(pkt);
	uint32_t total = fz_pkt_linearize(p, fz_out_buf, sizeof(fz_out_buf));
	(void) context;
	if (off + n > total)
		FZ_FAIL("udp_payload: payload [%u, %u) beyond the packet (%u bytes)", off, off + n, total);
	if ((h->app & FZ_A_UDP_ECHO) && h->send_budget) {
		struct fz_pkt *e = fz_pkt_new(n, 0);
		struct iip_udp_hdr *u = PB_UDP(pkt);
		uint8_t peer_mac[6];
		memcpy(e->data, fz_out_buf + off, n);
		e->len = (uint16_t) n;
		memcpy(peer_mac, iip_ops_l2_hdr_src_ptr(pkt, opaque), 6);
		h->send_budget--;
		if (iip_udp_send(h->ws, h->mac, h->ip_be, u->dst_be, peer_mac, PB_IP4(pkt)->src_be, u->src_be, e, h->opaque) != 0)
			fz_pkt_free(e);
	}
}

/* ---------- life of a host ---------- */

static void fz_host_init(struct fz_host *h, uint32_t n_conn, uint32_t n_pb, uint16_t mtu)
{
	uint32_t i;
	uint8_t key[16];
	memset(h, 0, sizeof(*h));
	h->ws = calloc(1, iip_workspace_size());
	memcpy(h->mac, fz_mac_self, 6);
	h->ip_be = __iip_htonl(FZ_IP_SELF);
	h->now_ns = 1000000000ULL;
	h->opaque[0] = h;
	h->mtu = mtu;
	h->tx_room = FZ_HEADROOM + (mtu + 14U > 2048U ? mtu + 14U : 2048U);
	h->send_budget = FZ_SEND_BUDGET;
	h->n_conn = n_conn;
	h->n_pb = n_pb;
	h->conn_mem = (void **) calloc(n_conn, sizeof(void *));
	h->pb_mem = (void **) calloc(n_pb, sizeof(void *));
	for (i = 0; i < n_conn; i++)
		iip_add_tcp_conn(h->ws, h->conn_mem[i] = calloc(1, iip_tcp_conn_size()));
	for (i = 0; i < n_pb; i++)
		iip_add_pb(h->ws, h->pb_mem[i] = calloc(1, iip_pb_size()));
	for (i = 0; i < 16; i++)
		key[i] = (uint8_t) (i * 7 + 1);
	iip_set_isn_secret(h->ws, key);
	iip_set_mtu(h->ws, mtu);
}

/* The stack's own accounting, checked between steps. */
FZ_NO_COV static void fz_check_accounting(struct fz_host *h)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	struct iip_tcp_conn *c;
	uint32_t held = 0, live = 0, i;
	for (c = ws->conn_all; c; c = c->all_next) {
		struct iip_pb *pb;
		uint32_t n = 0;
		live++;
		if (live > ws->conn_total)
			FZ_FAIL("connection list loops");
		if (c->state == IIP_TCP_STATE_CLOSED)
			FZ_FAIL("CLOSED connection still on the live list");
		for (pb = c->txq.head; pb; pb = pb->next)
			n++;
		if (n != c->txq.cnt)
			FZ_FAIL("send queue count %u, list holds %u", c->txq.cnt, n);
		held += n;
		n = 0;
		for (pb = c->ooo.head; pb; pb = pb->next)
			n++;
		if (n != c->ooo.cnt)
			FZ_FAIL("out-of-order queue count %u, list holds %u", c->ooo.cnt, n);
		held += n;
		if (__iip_seq_gt(c->snd_una, c->snd_max) || __iip_seq_gt(c->snd_nxt, c->snd_max))
			FZ_FAIL("send sequence space out of order: una %u nxt %u max %u (state %u)", c->snd_una, c->snd_nxt, c->snd_max, c->state);
	}
	if (live != ws->conn_live || live + ws->conn_pool_cnt != ws->conn_total)
		FZ_FAIL("connections: %u live on the list, conn_live %u, pool %u, total %u", live, ws->conn_live, ws->conn_pool_cnt, ws->conn_total);
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++)
		if (ws->reasm[i].used)
			held += ws->reasm[i].frags.cnt;
	if (held + ws->pb_pool.cnt != ws->pb_total)
		FZ_FAIL("packet wrappers: %u held + %u free != %u total", held, ws->pb_pool.cnt, ws->pb_total);
	for (i = 0; i < h->n_handles; i++)
		fz_handle_check(h, h->handles[i], "app handle");
}

/* Ends every connection and reassembly, then checks that nothing leaked. */
static void fz_host_fini(struct fz_host *h)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	struct iip_tcp_conn *c;
	uint32_t i;
	fz_check_accounting(h);
	for (c = ws->conn_all; c; c = c->all_next)
		if (__iip_tcp_lookup(ws, c->local_ip4_be, c->local_port_be, c->peer_ip4_be, c->peer_port_be) != c)
			FZ_FAIL("live connection not found by its 4-tuple");
	while (ws->conn_all)
		__iip_tcp_conn_release(ws, ws->conn_all, h->opaque);
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++)
		if (ws->reasm[i].used)
			__iip_ip4_reasm_drop(ws, &ws->reasm[i], h->opaque);
	if (h->n_handles)
		FZ_FAIL("%u connections never reported closed", h->n_handles);
	if (fz_pkts_alive != 0)
		FZ_FAIL("%ld packets leaked", fz_pkts_alive);
	if (ws->pb_pool.cnt != h->n_pb || ws->conn_pool_cnt != h->n_conn)
		FZ_FAIL("pools not full after teardown: %u/%u wrappers, %u/%u connections", ws->pb_pool.cnt, h->n_pb, ws->conn_pool_cnt, h->n_conn);
	for (i = 0; i < h->n_conn; i++)
		free(h->conn_mem[i]);
	for (i = 0; i < h->n_pb; i++)
		free(h->pb_mem[i]);
	free(h->conn_mem);
	free(h->pb_mem);
	free(h->ws);
}

#endif /* TESTS_FUZZ_FUZZ_HOST_H */
