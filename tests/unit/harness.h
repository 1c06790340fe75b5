/*
 * harness.h: packet-level test harness.  One stack (a "host"), a fake clock,
 * frames built by hand and fed to iip_run, and every frame the stack emits
 * captured for assertions.  A test file includes this once, defines test
 * functions with TEST(name), and lists them in main() with RUN(name).
 *
 * Packets are malloc'd, reference-counted buffers with a descriptor per
 * reference, like DPDK mbufs, so clone/chain/free semantics are real and
 * leaks show up in th_pkts_alive.
 */
#ifndef TESTS_UNIT_HARNESS_H
#define TESTS_UNIT_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf
#include "../../stack/main.c"

/* helpers a given test file may not use */
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---------- byte order and checksums for building frames (independent of the stack's) ---------- */

static uint16_t ntohs_(uint16_t v) { const uint8_t *b = (const uint8_t *) &v; return (uint16_t) ((b[0] << 8) | b[1]); }
static uint16_t htons_(uint16_t v) { uint16_t r; uint8_t *b = (uint8_t *) &r; b[0] = (uint8_t) (v >> 8); b[1] = (uint8_t) v; return r; }
static uint32_t htonl_(uint32_t v) { uint32_t r; uint8_t *b = (uint8_t *) &r; b[0] = (uint8_t) (v >> 24); b[1] = (uint8_t) (v >> 16); b[2] = (uint8_t) (v >> 8); b[3] = (uint8_t) v; return r; }
static uint32_t ntohl_(uint32_t v) { const uint8_t *b = (const uint8_t *) &v; return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) | ((uint32_t) b[2] << 8) | b[3]; }
static uint32_t be32_(const uint8_t *p) { return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3]; }
static uint16_t be16_(const uint8_t *p) { return (uint16_t) ((p[0] << 8) | p[1]); }
static void put16_(uint8_t *p, uint16_t v) { p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v; }
static void put32_(uint8_t *p, uint32_t v) { p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v; }


/* ---------- packets ---------- */

#define TH_BUF_SIZE (70 * 1024)
#define TH_HEADROOM (130) /* IP header 4-byte aligned after a 14-byte Ethernet header (NET_IP_ALIGN) */

struct th_buf {
	int ref;
	uint8_t data[TH_BUF_SIZE];
};

struct th_pkt {
	struct th_buf *buf;
	uint8_t *data;
	uint16_t len;
	struct th_pkt *next;
	uint8_t ol_ip4_csum, ol_tcp_csum, ol_udp_csum, ol_tso;
	uint8_t rx_csum_bad; /* for rx offload emulation: the "NIC" found a bad sum */
};

static long th_pkts_alive;

static struct th_pkt *th_pkt_new(void)
{
	struct th_pkt *p = (struct th_pkt *) calloc(1, sizeof(*p));
	p->buf = (struct th_buf *) malloc(sizeof(struct th_buf));
	p->buf->ref = 1;
	p->data = p->buf->data + TH_HEADROOM;
	th_pkts_alive++;
	return p;
}

static void th_pkt_free(struct th_pkt *p)
{
	while (p) {
		struct th_pkt *n = p->next;
		if (--p->buf->ref == 0)
			free(p->buf);
		free(p);
		th_pkts_alive--;
		p = n;
	}
}

static uint32_t th_pkt_linearize(struct th_pkt *p, uint8_t *out)
{
	uint32_t n = 0;
	for (; p; p = p->next) {
		memcpy(out + n, p->data, p->len);
		n += p->len;
	}
	return n;
}

/* ---------- a host ---------- */

struct th_frame {
	uint8_t data[TH_BUF_SIZE];
	uint32_t len;
	uint8_t ol_ip4_csum, ol_tcp_csum, ol_udp_csum, ol_tso;
	uint8_t chained;
};

#define TH_MAX_FRAMES (4096)

struct th_host {
	void *ws;
	uint8_t mac[6];
	uint32_t ip_be;
	uint64_t now_ns;
	/* NIC features the fake reports */
	uint8_t f_sg, f_ip4_rx_csum, f_ip4_tx_csum, f_tcp_rx_csum, f_tcp_tx_csum, f_tso, f_udp_rx_csum, f_udp_tx_csum;
	uint8_t alloc_fail; /* iip_ops_pkt_alloc returns NULL while set */
	/* captured output */
	struct th_frame *out[TH_MAX_FRAMES];
	uint32_t out_head, out_tail;
	uint32_t flushes;
	uint32_t next_us;
	/* application behaviour and observations */
	uint8_t accept_ports[65536 / 8];
	uint32_t n_arp_reply, n_icmp_reply, n_udp, n_accept, n_accepted, n_connected, n_payload, n_acked, n_closed;
	uint8_t rx_data[1 << 20];
	uint32_t rx_len;
	uint8_t last_udp[TH_BUF_SIZE];
	uint32_t last_udp_len;
	uint8_t fin_seen;
	void *handle;		/* last accepted/connected connection */
	void *closed_handle;
	void *closed_opaque;
	uint8_t consume;	/* call iip_tcp_rxbuf_consumed from the payload callback */
	void (*on_payload)(struct th_host *h, void *handle, const uint8_t *data, uint32_t len);
	void (*on_accepted)(struct th_host *h, void *handle);
	void *opaque[3];
	void *conn_mem[64];
	void *pb_mem[1024];
};

static struct th_host *th_host_of(void *opaque)
{
	return (struct th_host *) ((void **) opaque)[0];
}

/* ---------- callbacks ---------- */

static void *iip_ops_pkt_alloc(void *opaque)
{
	if (th_host_of(opaque)->alloc_fail)
		return NULL;
	return th_pkt_new();
}
static void iip_ops_pkt_free(void *pkt, void *opaque) { (void) opaque; th_pkt_free((struct th_pkt *) pkt); }
static void *iip_ops_pkt_get_data(void *pkt, void *opaque) { (void) opaque; return ((struct th_pkt *) pkt)->data; }
static uint16_t iip_ops_pkt_get_len(void *pkt, void *opaque) { (void) opaque; return ((struct th_pkt *) pkt)->len; }
static void iip_ops_pkt_set_len(void *pkt, uint16_t len, void *opaque) { (void) opaque; ((struct th_pkt *) pkt)->len = len; }
static void iip_ops_pkt_increment_head(void *pkt, uint16_t len, void *opaque)
{
	struct th_pkt *p = (struct th_pkt *) pkt;
	(void) opaque;
	if (len > p->len) { fprintf(stderr, "increment_head beyond length\n"); abort(); }
	p->data += len;
	p->len = (uint16_t) (p->len - len);
}
static void iip_ops_pkt_decrement_tail(void *pkt, uint16_t len, void *opaque)
{
	struct th_pkt *p = (struct th_pkt *) pkt;
	(void) opaque;
	if (len > p->len) { fprintf(stderr, "decrement_tail beyond length\n"); abort(); }
	p->len = (uint16_t) (p->len - len);
}
static void *iip_ops_pkt_clone(void *pkt, void *opaque)
{
	struct th_pkt *src = (struct th_pkt *) pkt, *head = NULL, **tail = &head;
	if (th_host_of(opaque)->alloc_fail)
		return NULL;
	for (; src; src = src->next) {
		struct th_pkt *c = (struct th_pkt *) calloc(1, sizeof(*c));
		*c = *src;
		c->next = NULL;
		c->buf->ref++;
		th_pkts_alive++;
		*tail = c;
		tail = &c->next;
	}
	return head;
}
static void iip_ops_pkt_scatter_gather_chain_append(void *pkt_head, void *pkt_tail, void *opaque)
{
	struct th_pkt *p = (struct th_pkt *) pkt_head;
	(void) opaque;
	while (p->next)
		p = p->next;
	p->next = (struct th_pkt *) pkt_tail;
}
static void *iip_ops_pkt_scatter_gather_chain_get_next(void *pkt_head, void *opaque) { (void) opaque; return ((struct th_pkt *) pkt_head)->next; }

static void iip_ops_util_now_ns(uint32_t t[3], void *opaque)
{
	uint64_t ns = th_host_of(opaque)->now_ns;
	uint64_t sec = ns / 1000000000ULL;
	t[0] = (uint32_t) (sec >> 32);
	t[1] = (uint32_t) sec;
	t[2] = (uint32_t) (ns % 1000000000ULL);
}

static uint16_t iip_ops_l2_hdr_len(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 14; }
static uint8_t *iip_ops_l2_hdr_src_ptr(void *pkt, void *opaque) { (void) opaque; return ((struct th_pkt *) pkt)->data + 6; }
static uint8_t *iip_ops_l2_hdr_dst_ptr(void *pkt, void *opaque) { (void) opaque; return ((struct th_pkt *) pkt)->data; }
static uint16_t iip_ops_l2_ethertype_be(void *pkt, void *opaque)
{
	uint16_t v;
	(void) opaque;
	memcpy(&v, ((struct th_pkt *) pkt)->data + 12, 2);
	return v;
}
static uint16_t iip_ops_l2_addr_len(void *opaque) { (void) opaque; return 6; }
static void iip_ops_l2_broadcast_addr(uint8_t bcaddr[], void *opaque) { (void) opaque; memset(bcaddr, 0xff, 6); }
static void iip_ops_l2_hdr_craft(void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype_be, void *opaque)
{
	uint8_t *d = ((struct th_pkt *) pkt)->data;
	(void) opaque;
	memcpy(d, dst, 6);
	memcpy(d + 6, src, 6);
	memcpy(d + 12, &ethertype_be, 2);
}
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque) { (void) pkt; (void) opaque; return 0; }
static void iip_ops_l2_flush(void *opaque) { th_host_of(opaque)->flushes++; }
static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	struct th_pkt *p = (struct th_pkt *) pkt;
	struct th_frame *f = (struct th_frame *) calloc(1, sizeof(*f));
	f->len = th_pkt_linearize(p, f->data);
	f->ol_ip4_csum = p->ol_ip4_csum;
	f->ol_tcp_csum = p->ol_tcp_csum;
	f->ol_udp_csum = p->ol_udp_csum;
	f->ol_tso = p->ol_tso;
	f->chained = p->next != NULL;
	if (h->out_tail - h->out_head < TH_MAX_FRAMES)
		h->out[h->out_tail++ % TH_MAX_FRAMES] = f;
	else
		free(f);
	th_pkt_free(p);
}
static uint8_t iip_ops_arp_lhw(void *opaque) { (void) opaque; return 6; }
static uint8_t iip_ops_arp_lproto(void *opaque) { (void) opaque; return 4; }

static uint8_t iip_ops_nic_feature_offload_tx_scatter_gather(void *opaque) { return th_host_of(opaque)->f_sg; }
static uint8_t iip_ops_nic_feature_offload_ip4_rx_checksum(void *opaque) { return th_host_of(opaque)->f_ip4_rx_csum; }
static uint8_t iip_ops_nic_feature_offload_ip4_tx_checksum(void *opaque) { return th_host_of(opaque)->f_ip4_tx_csum; }
static uint8_t iip_ops_nic_feature_offload_tcp_rx_checksum(void *opaque) { return th_host_of(opaque)->f_tcp_rx_csum; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_checksum(void *opaque) { return th_host_of(opaque)->f_tcp_tx_csum; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_tso(void *opaque) { return th_host_of(opaque)->f_tso; }
static uint8_t iip_ops_nic_feature_offload_udp_rx_checksum(void *opaque) { return th_host_of(opaque)->f_udp_rx_csum; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_checksum(void *opaque) { return th_host_of(opaque)->f_udp_tx_csum; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_tso(void *opaque) { (void) opaque; return 0; }
static uint8_t iip_ops_nic_offload_ip4_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct th_pkt *) pkt)->rx_csum_bad; }
static uint8_t iip_ops_nic_offload_tcp_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct th_pkt *) pkt)->rx_csum_bad; }
static uint8_t iip_ops_nic_offload_udp_rx_checksum(void *pkt, void *opaque) { (void) opaque; return !((struct th_pkt *) pkt)->rx_csum_bad; }
static void iip_ops_nic_offload_ip4_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct th_pkt *) pkt)->ol_ip4_csum = 1; }
static void iip_ops_nic_offload_tcp_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct th_pkt *) pkt)->ol_tcp_csum = 1; }
static void iip_ops_nic_offload_tcp_tx_tso_mark(void *pkt, void *opaque) { (void) opaque; ((struct th_pkt *) pkt)->ol_tso = 1; }
static void iip_ops_nic_offload_udp_tx_checksum_mark(void *pkt, void *opaque) { (void) opaque; ((struct th_pkt *) pkt)->ol_udp_csum = 1; }
static void iip_ops_nic_offload_udp_tx_tso_mark(void *pkt, void *opaque) { (void) pkt; (void) opaque; }

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; th_host_of(opaque)->n_arp_reply++; }
static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque) { (void) context; (void) pkt; th_host_of(opaque)->n_icmp_reply++; }
static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	uint16_t port = ntohs_(PB_TCP(pkt)->dst_be);
	(void) context;
	h->n_accept++;
	return (h->accept_ports[port >> 3] >> (port & 7)) & 1;
}
static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	(void) context; (void) pkt;
	h->n_accepted++;
	h->handle = handle;
	if (h->on_accepted)
		h->on_accepted(h, handle);
	return (void *) h;
}
static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	(void) context; (void) pkt;
	h->n_connected++;
	h->handle = handle;
	return (void *) h;
}
static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off, uint16_t tail_off, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	uint8_t tmp[TH_BUF_SIZE];
	uint32_t total = th_pkt_linearize((struct th_pkt *) pkt, tmp);
	uint32_t off = (uint32_t) (PB_TCP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque));
	uint32_t plen = PB_TCP_PAYLOAD_LEN(pkt);
	uint32_t n = plen - head_off - tail_off;
	(void) tcp_opaque; (void) total;
	h->n_payload++;
	if (PB_TCP_HDR_HAS_FIN(pkt))
		h->fin_seen = 1;
	if (h->rx_len + n <= sizeof(h->rx_data)) {
		memcpy(h->rx_data + h->rx_len, tmp + off + head_off, n);
		h->rx_len += n;
	}
	if (h->on_payload)
		h->on_payload(h, handle, tmp + off + head_off, n);
	if (h->consume)
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
}
static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) tcp_opaque;
	th_host_of(opaque)->n_acked++;
}
static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be, uint8_t peer_mac[],
			       uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	(void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac; (void) peer_ip4_be; (void) peer_port_be;
	h->n_closed++;
	h->closed_handle = handle;
	h->closed_opaque = tcp_opaque;
	if (h->handle == handle)
		h->handle = NULL;
}
static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	struct th_host *h = th_host_of(opaque);
	uint8_t tmp[TH_BUF_SIZE];
	uint32_t total = th_pkt_linearize((struct th_pkt *) pkt, tmp);
	uint32_t off = (uint32_t) (PB_UDP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque));
	uint32_t n = PB_UDP_PAYLOAD_LEN(pkt);
	(void) context;
	h->n_udp++;
	if (off + n <= total) {
		memcpy(h->last_udp, tmp + off, n);
		h->last_udp_len = n;
	}
}

/* Reference RFC 1071 checksum, written plainly, to check the stack's. */
static uint32_t ref_sum(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint32_t i;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t) ((p[i] << 8) | p[i + 1]);
	if (len & 1)
		sum += (uint32_t) (p[len - 1] << 8);
	return sum;
}
static uint16_t ref_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) ~sum;
}
/* checksum over the pseudo header (addresses as in the frame) and the L4 bytes */
static uint16_t ref_l4_csum(const uint8_t *ip, uint8_t proto, const uint8_t *l4, uint32_t l4_len)
{
	uint32_t s = ref_sum(ip + 12, 8, 0);
	s += proto;
	s += l4_len;
	return ref_fold(ref_sum(l4, l4_len, s));
}

/* ---------- building frames ---------- */

#define TH_MAC_PEER { 0x02, 0, 0, 0, 0, 0x02 }
static const uint8_t th_mac_peer[6] = TH_MAC_PEER;
static const uint8_t th_mac_self[6] = { 0x02, 0, 0, 0, 0, 0x01 };
#define TH_IP_SELF (0x0a000001U)	/* 10.0.0.1 */
#define TH_IP_PEER (0x0a000002U)	/* 10.0.0.2 */

/* Ethernet header; returns 14. */
static uint32_t th_eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put16_(f + 12, type);
	return 14;
}

/* An IPv4 header (20 B, or more with opts) with a correct checksum unless bad_csum. */
struct th_ip {
	uint32_t src, dst;	/* host order */
	uint8_t proto, ttl, tos;
	uint16_t id, frag;	/* frag: flags and offset word, host order */
	const uint8_t *opts;
	uint8_t opts_len;	/* multiple of 4 */
	int16_t len_adjust;	/* added to the total length field (malformed cases) */
	uint8_t bad_csum, version;
};

static uint32_t th_ip4(uint8_t *p, const struct th_ip *d, uint32_t l4_len)
{
	uint32_t hl = 20 + d->opts_len;
	p[0] = (uint8_t) (((d->version ? d->version : 4) << 4) | (hl / 4));
	p[1] = d->tos;
	put16_(p + 2, (uint16_t) (hl + l4_len + d->len_adjust));
	put16_(p + 4, d->id);
	put16_(p + 6, d->frag);
	p[8] = d->ttl ? d->ttl : 64;
	p[9] = d->proto;
	put16_(p + 10, 0);
	put32_(p + 12, d->src);
	put32_(p + 16, d->dst);
	if (d->opts_len)
		memcpy(p + 20, d->opts, d->opts_len);
	{
		uint16_t c = ref_fold(ref_sum(p, hl, 0));
		if (d->bad_csum)
			c ^= 0x5a5a;
		put16_(p + 10, c);
	}
	return hl;
}

/* A TCP segment description ("like the default segment, but ..."). */
struct th_seg {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *opts;
	uint8_t opts_len;	/* multiple of 4 */
	const uint8_t *payload;
	uint32_t payload_len;
	uint8_t bad_csum;
	uint8_t doff_override;	/* 0: computed */
};

static struct th_seg th_seg_default(void)
{
	struct th_seg s;
	memset(&s, 0, sizeof(s));
	s.src_ip = TH_IP_PEER;
	s.dst_ip = TH_IP_SELF;
	s.sport = 40000;
	s.dport = 80;
	s.win = 65535;
	s.flags = IIP_TCP_FLAG_ACK;
	return s;
}

/* Builds a whole frame for a segment; returns its length. */
static uint32_t th_build_tcp(uint8_t *f, const struct th_seg *s)
{
	struct th_ip ip;
	uint32_t n = th_eth(f, th_mac_self, th_mac_peer, 0x0800), thl = 20 + s->opts_len;
	uint8_t *t;
	memset(&ip, 0, sizeof(ip));
	ip.src = s->src_ip;
	ip.dst = s->dst_ip;
	ip.proto = 6;
	ip.frag = 0x4000;
	n += th_ip4(f + n, &ip, thl + s->payload_len);
	t = f + n;
	put16_(t, s->sport);
	put16_(t + 2, s->dport);
	put32_(t + 4, s->seq);
	put32_(t + 8, s->ack);
	t[12] = (uint8_t) ((s->doff_override ? s->doff_override : thl / 4) << 4);
	t[13] = s->flags;
	put16_(t + 14, s->win);
	put16_(t + 16, 0);
	put16_(t + 18, 0);
	if (s->opts_len)
		memcpy(t + 20, s->opts, s->opts_len);
	if (s->payload_len)
		memcpy(t + thl, s->payload, s->payload_len);
	{
		uint16_t c = ref_l4_csum(f + 14, 6, t, thl + s->payload_len);
		if (s->bad_csum)
			c ^= 0x1234;
		put16_(t + 16, c);
	}
	return n + thl + s->payload_len;
}

/* ---------- ARP, UDP, ICMP and fragment builders ---------- */

static const uint8_t th_mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* An IPv4 description with the usual fields: peer -> self, protocol proto, no fragmentation. */
static struct th_ip th_ip_default(uint8_t proto)
{
	struct th_ip d;
	memset(&d, 0, sizeof(d));
	d.src = TH_IP_PEER;
	d.dst = TH_IP_SELF;
	d.proto = proto;
	d.id = 0x1234;
	return d;
}

/* Recomputes the header checksum of an IPv4 header a test has patched. */
static void th_ip4_fix_csum(uint8_t *ip)
{
	uint32_t hl = (uint32_t) (ip[0] & 15) * 4;
	put16_(ip + 10, 0);
	put16_(ip + 10, ref_fold(ref_sum(ip, hl, 0)));
}

/* An ARP message (RFC 826, Ethernet/IPv4) from the peer's MAC, zero-padded
 * to the 60-byte Ethernet minimum; returns 60 (the message itself is 42 B). */
static uint32_t th_build_arp(uint8_t *f, const uint8_t *eth_dst, uint16_t op, const uint8_t *sha, uint32_t spa,
			     const uint8_t *tha, uint32_t tpa)
{
	uint32_t n = th_eth(f, eth_dst, th_mac_peer, 0x0806);
	memset(f + n, 0, 60 - n);
	put16_(f + n, 1);
	put16_(f + n + 2, 0x0800);
	f[n + 4] = 6;
	f[n + 5] = 4;
	put16_(f + n + 6, op);
	memcpy(f + n + 8, sha, 6);
	put32_(f + n + 14, spa);
	memcpy(f + n + 18, tha, 6);
	put32_(f + n + 24, tpa);
	return 60;
}

/* UDP header and payload at u, with the checksum over src/dst; returns 8 + len. */
static uint32_t th_udp(uint8_t *u, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, const uint8_t *payload, uint32_t len)
{
	uint8_t pseudo[20];
	put16_(u, sport);
	put16_(u + 2, dport);
	put16_(u + 4, (uint16_t) (8 + len));
	put16_(u + 6, 0);
	if (len)
		memcpy(u + 8, payload, len);
	put32_(pseudo + 12, src); /* ref_l4_csum reads the addresses at offset 12 of an IP header */
	put32_(pseudo + 16, dst);
	{
		uint16_t c = ref_l4_csum(pseudo, 17, u, 8 + len);
		put16_(u + 6, c ? c : 0xffff);
	}
	return 8 + len;
}

/* An ICMP message at m: type, code, the id/seq word, payload; checksum computed; returns 8 + len. */
static uint32_t th_icmp(uint8_t *m, uint8_t type, uint8_t code, uint16_t id, uint16_t seq, const uint8_t *payload, uint32_t len)
{
	m[0] = type;
	m[1] = code;
	put16_(m + 2, 0);
	put16_(m + 4, id);
	put16_(m + 6, seq);
	if (len)
		memcpy(m + 8, payload, len);
	put16_(m + 2, ref_fold(ref_sum(m, 8 + len, 0)));
	return 8 + len;
}

/* A frame (peer -> self MAC) carrying one IPv4 datagram: header from d, then l4_len bytes of l4. */
static uint32_t th_build_ip4(uint8_t *f, const struct th_ip *d, const uint8_t *l4, uint32_t l4_len)
{
	uint32_t n = th_eth(f, th_mac_self, th_mac_peer, 0x0800);
	n += th_ip4(f + n, d, l4_len);
	memcpy(f + n, l4, l4_len);
	return n + l4_len;
}

/* One fragment of the datagram whose L4 bytes are l4: bytes [off, off + len),
 * MF when more; the DF bit of d->frag is kept.  Returns the frame length. */
static uint32_t th_build_frag(uint8_t *f, const struct th_ip *d, const uint8_t *l4, uint32_t off, uint32_t len, int more)
{
	struct th_ip fd = *d;
	fd.frag = (uint16_t) ((d->frag & 0x4000) | (more ? 0x2000 : 0) | ((off / 8) & 0x1fff));
	return th_build_ip4(f, &fd, l4 + off, len);
}

/* A received packet holding a copy of frame (set flags such as rx_csum_bad before th_run_pkt). */
static struct th_pkt *th_pkt_from(const uint8_t *frame, uint32_t len)
{
	struct th_pkt *p = th_pkt_new();
	memcpy(p->data, frame, len);
	p->len = (uint16_t) len;
	return p;
}

/* Runs the stack with one packet the test prepared. */
static void th_run_pkt(struct th_host *h, struct th_pkt *p)
{
	void *pkts[1];
	pkts[0] = p;
	iip_run(h->ws, h->mac, h->ip_be, pkts, 1, &h->next_us, h->opaque);
}

/* Copies the IP payload of a fragment the stack sent into buf at its
 * fragment offset; returns the offset of its end. */
static uint32_t th_frag_place(const struct th_frame *fr, uint8_t *buf)
{
	const uint8_t *ip = fr->data + 14;
	uint32_t hl = (uint32_t) (ip[0] & 15) * 4, len = be16_(ip + 2) - hl;
	uint32_t off = (uint32_t) (be16_(ip + 6) & 0x1fff) * 8;
	memcpy(buf + off, ip + hl, len);
	return off + len;
}

/* ---------- parsing what the stack sent ---------- */

struct th_parsed {
	uint16_t ethertype;
	const uint8_t *ip;
	uint8_t ip_hl, proto, ttl;
	uint16_t ip_len, ip_id, ip_frag;
	uint32_t src, dst;
	uint8_t ip_csum_ok;
	/* TCP */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint8_t l4_csum_ok;
	const uint8_t *payload;
	uint32_t payload_len;
	struct iip_tcp_opts opts; /* parsed with our own parser only for the fields, checked by hand */
	uint8_t has_mss, has_ws, has_sackp, has_ts, sack_blocks;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	uint32_t sack[8];
};

static void th_parse(const struct th_frame *fr, struct th_parsed *p)
{
	const uint8_t *f = fr->data;
	memset(p, 0, sizeof(*p));
	p->ethertype = be16_(f + 12);
	if (p->ethertype != 0x0800)
		return;
	p->ip = f + 14;
	p->ip_hl = (uint8_t) ((p->ip[0] & 15) * 4);
	p->ip_len = be16_(p->ip + 2);
	p->ip_id = be16_(p->ip + 4);
	p->ip_frag = be16_(p->ip + 6);
	p->ttl = p->ip[8];
	p->proto = p->ip[9];
	p->src = be32_(p->ip + 12);
	p->dst = be32_(p->ip + 16);
	p->ip_csum_ok = fr->ol_ip4_csum || ref_fold(ref_sum(p->ip, p->ip_hl, 0)) == 0;
	if (p->proto == 6) {
		const uint8_t *t = p->ip + p->ip_hl;
		uint32_t thl = (uint32_t) (t[12] >> 4) * 4, i;
		p->sport = be16_(t);
		p->dport = be16_(t + 2);
		p->seq = be32_(t + 4);
		p->ack = be32_(t + 8);
		p->flags = t[13];
		p->win = be16_(t + 14);
		p->payload = t + thl;
		p->payload_len = p->ip_len - p->ip_hl - thl;
		if (fr->ol_tcp_csum) {
			/* offloaded: the field must hold the pseudo-header sum */
			uint32_t s = ref_sum(p->ip + 12, 8, 0) + 6 + (p->ip_len - p->ip_hl);
			while (s >> 16)
				s = (s & 0xffff) + (s >> 16);
			p->l4_csum_ok = be16_(t + 16) == s;
		} else
			p->l4_csum_ok = ref_l4_csum(p->ip, 6, t, p->ip_len - p->ip_hl) == 0;
		for (i = 20; i < thl;) {
			uint8_t k = t[i];
			if (k == 0)
				break;
			if (k == 1) {
				i++;
				continue;
			}
			if (k == 2) { p->has_mss = 1; p->mss = be16_(t + i + 2); }
			if (k == 3) { p->has_ws = 1; p->ws = t[i + 2]; }
			if (k == 4) p->has_sackp = 1;
			if (k == 8) { p->has_ts = 1; p->tsval = be32_(t + i + 2); p->tsecr = be32_(t + i + 6); }
			if (k == 5) {
				uint32_t b;
				p->sack_blocks = (uint8_t) ((t[i + 1] - 2) / 8);
				for (b = 0; b < p->sack_blocks && b < 4; b++) {
					p->sack[b * 2] = be32_(t + i + 2 + b * 8);
					p->sack[b * 2 + 1] = be32_(t + i + 6 + b * 8);
				}
			}
			i += t[i + 1] ? t[i + 1] : 1;
		}
	} else if (p->proto == 17) {
		const uint8_t *u = p->ip + p->ip_hl;
		p->sport = be16_(u);
		p->dport = be16_(u + 2);
		p->payload = u + 8;
		p->payload_len = be16_(u + 4) - 8;
		if (fr->ol_udp_csum || (p->ip_frag & 0x3fff) || be16_(u + 6) == 0)
			p->l4_csum_ok = 1; /* offloaded, a fragment (checked after reassembly), or no sum */
		else
			p->l4_csum_ok = ref_l4_csum(p->ip, 17, u, p->ip_len - p->ip_hl) == 0;
	} else if (p->proto == 1) {
		p->payload = p->ip + p->ip_hl;
		p->payload_len = p->ip_len - p->ip_hl;
	}
}

/* ---------- driving a host ---------- */

static void th_host_init(struct th_host *h)
{
	uint32_t i;
	memset(h, 0, sizeof(*h));
	h->ws = calloc(1, iip_workspace_size());
	memcpy(h->mac, th_mac_self, 6);
	h->ip_be = htonl_(TH_IP_SELF);
	h->now_ns = 1000000000ULL; /* t = 1 s */
	h->consume = 1;
	h->opaque[0] = h;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < 64; i++)
		iip_add_tcp_conn(h->ws, h->conn_mem[i] = calloc(1, iip_tcp_conn_size()));
	for (i = 0; i < 1024; i++)
		iip_add_pb(h->ws, h->pb_mem[i] = calloc(1, iip_pb_size()));
	{
		uint8_t key[16];
		for (i = 0; i < 16; i++)
			key[i] = (uint8_t) (i * 7 + 1);
		iip_set_isn_secret(h->ws, key);
	}
}

static uint32_t th_out_count(struct th_host *h) { return h->out_tail - h->out_head; }

/* Pops the next frame the stack sent (NULL if none). The caller frees it. */
static struct th_frame *th_pop(struct th_host *h)
{
	if (h->out_head == h->out_tail)
		return NULL;
	return h->out[h->out_head++ % TH_MAX_FRAMES];
}

static void th_drain(struct th_host *h)
{
	struct th_frame *f;
	while ((f = th_pop(h)) != NULL)
		free(f);
}

/* Runs the stack with zero or one frame. */
static void th_run(struct th_host *h, const uint8_t *frame, uint32_t len)
{
	void *pkts[1];
	uint16_t n = 0;
	if (frame) {
		struct th_pkt *p = th_pkt_new();
		memcpy(p->data, frame, len);
		p->len = (uint16_t) len;
		pkts[0] = p;
		n = 1;
	}
	iip_run(h->ws, h->mac, h->ip_be, pkts, n, &h->next_us, h->opaque);
}

static void th_advance_ms(struct th_host *h, uint32_t ms)
{
	h->now_ns += (uint64_t) ms * 1000000ULL;
	th_run(h, NULL, 0);
}

static void th_send_seg(struct th_host *h, const struct th_seg *s)
{
	static uint8_t f[TH_BUF_SIZE];
	th_run(h, f, th_build_tcp(f, s));
}

static struct iip_stats th_stats(struct th_host *h)
{
	struct iip_stats s;
	iip_stats_get(h->ws, &s);
	return s;
}

/* ---------- test bookkeeping ---------- */

static int th_failed_checks, th_tests_passed, th_tests_failed;
static const char *th_current;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			th_failed_checks++; \
			printf("  %s:%d: %s: check failed: %s\n", __FILE__, __LINE__, th_current, #cond); \
		} \
	} while (0)

#define CHECK_EQ(a, b) \
	do { \
		unsigned long long _a = (unsigned long long) (a), _b = (unsigned long long) (b); \
		if (_a != _b) { \
			th_failed_checks++; \
			printf("  %s:%d: %s: %s == %s failed (%llu != %llu)\n", __FILE__, __LINE__, th_current, #a, #b, _a, _b); \
		} \
	} while (0)

#define TEST(name) static __attribute__((noinline)) void name(void) /* noinline: clang would inline every test into main and sum their stack frames */

#define RUN(name) \
	do { \
		int _before = th_failed_checks; \
		long _alive = th_pkts_alive; \
		th_current = #name; \
		name(); \
		if (th_pkts_alive != _alive) { \
			printf("  %s: packets leaked: %ld\n", #name, th_pkts_alive - _alive); \
			th_failed_checks++; \
		} \
		if (th_failed_checks == _before) { \
			th_tests_passed++; \
			printf("ok - %s\n", #name); \
		} else { \
			th_tests_failed++; \
			printf("not ok - %s\n", #name); \
		} \
	} while (0)

#define TH_SUMMARY() \
	do { \
		printf("%d passed, %d failed\n", th_tests_passed, th_tests_failed); \
		return th_tests_failed ? 1 : 0; \
	} while (0)

/* Ends every connection and reassembly so that no packet stays held (the leak check). */
static void th_host_fini(struct th_host *h)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	uint32_t i;
	while (ws->conn_all) {
		struct iip_tcp_conn *c = ws->conn_all;
		c->app_notified = 0;
		__iip_tcp_conn_release(ws, c, h->opaque);
	}
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++)
		if (ws->reasm[i].used)
			__iip_ip4_reasm_drop(ws, &ws->reasm[i], h->opaque);
	th_drain(h);
	/* every wrapper and connection must be back in its pool */
	CHECK_EQ(ws->pb_pool.cnt, 1024);
	CHECK_EQ(ws->conn_pool_cnt, 64);
	for (i = 0; i < 64; i++)
		free(h->conn_mem[i]);
	for (i = 0; i < 1024; i++)
		free(h->pb_mem[i]);
	free(h->ws);
}

#endif /* TESTS_UNIT_HARNESS_H */
