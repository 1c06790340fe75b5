/*
 * io/common/pkt_offload.h — what a NIC does to a frame that the stack marked
 * for offload, done in software for the emulated and software backends:
 *
 *  - TX checksum: IPv4 header checksum, TCP and UDP checksums.
 *  - TSO: split one big TCP frame into MSS-sized frames on the wire.
 *  - RX checksum: verify the checksums of a received frame and record the
 *    result in the packet (IO_PKT_F_RX_*_GOOD), which the stack reads back
 *    through iip_ops_nic_offload_{ip4,tcp,udp}_rx_checksum.
 *
 * The checksum field convention for marked TCP/UDP frames: like real NICs
 * (and DPDK's PKT_TX_TCP_CKSUM), the stack leaves the pseudo-header sum in
 * the TCP/UDP checksum field (folded, not inverted; with the L4 length for a
 * plain checksum offload, and for TSO either with or without it, as NICs
 * differ there). We do NOT rely on that value to produce the result: the
 * checksum is recomputed from the IP header and the L4 bytes, which is right
 * whatever the field held. We do check the convention and count the frames
 * that follow it and those that do not (struct io_offload_stats), so a
 * backend can report a stack that would break on real hardware.
 *
 * Frames are parsed by byte offsets (Ethernet II, IPv4 without relying on
 * the stack's header structs) so this file has no dependency on the stack.
 */
#ifndef IO_COMMON_PKT_OFFLOAD_H
#define IO_COMMON_PKT_OFFLOAD_H

#include "pkt.h"

#define IO_ETH_HDR_LEN 14
#define IO_ETHERTYPE_IP4 0x0800
#define IO_IPPROTO_TCP 6
#define IO_IPPROTO_UDP 17
#define IO_TCP_FLAG_FIN 0x01
#define IO_TCP_FLAG_PSH 0x08
#define IO_TCP_FLAG_CWR 0x80

struct io_offload_stats {
	uint64_t frames_in;       /* frames handed to io_pkt_finish_tx_offloads */
	uint64_t frames_out;      /* frames produced (TSO makes several) */
	uint64_t tso_frames;      /* marked frames that needed splitting */
	uint64_t pseudo_ok;       /* L4 field held the pseudo-header sum */
	uint64_t pseudo_mismatch; /* it held something else */
	uint64_t errors;          /* malformed or no buffer: frame dropped */
};

/* ---- checksum arithmetic ------------------------------------------------- */

/* sum of big-endian 16-bit words (an odd last byte is the high byte) */
static inline uint32_t io_csum_add(const uint8_t *p, size_t len, uint32_t sum)
{
	while (len >= 2) {
		sum += ((uint32_t) p[0] << 8) | p[1];
		if (sum & 0x80000000u)
			sum = (sum & 0xffff) + (sum >> 16);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t) p[0] << 8;
	return sum;
}

static inline uint16_t io_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) sum;
}

/* sum over bytes [off, off+len) of a chain; odd segment boundaries handled
 * by byte-swapping the partial sum of a region that starts at an odd offset */
static inline uint32_t io_csum_chain(const struct io_pkt *pkt, uint32_t off, uint32_t len, uint32_t sum)
{
	uint32_t pos = 0; /* bytes summed so far */
	for (; pkt && pos < len; pkt = pkt->next) {
		uint32_t n;
		uint16_t part;
		if (off >= pkt->len) {
			off -= pkt->len;
			continue;
		}
		n = pkt->len - off;
		if (n > len - pos)
			n = len - pos;
		part = io_csum_fold(io_csum_add(pkt->data + off, n, 0));
		if (pos & 1)
			part = (uint16_t) ((part << 8) | (part >> 8));
		sum += part;
		pos += n;
		off = 0;
	}
	return sum;
}

static inline uint16_t io_rd16(const uint8_t *p) { return (uint16_t) ((p[0] << 8) | p[1]); }
static inline uint32_t io_rd32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}
static inline void io_wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v; }
static inline void io_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

/* pseudo-header sum of an IPv4 header for protocol proto and L4 length l4len */
static inline uint32_t io_csum_pseudo(const uint8_t *ip, uint8_t proto, uint32_t l4len)
{
	uint32_t sum = io_csum_add(ip + 12, 8, 0); /* source and destination */
	return sum + proto + l4len;
}

/* ---- parsing --------------------------------------------------------------- */

struct io_ip4_layout {
	uint32_t ip_off;   /* 14: offset of the IPv4 header in the frame */
	uint32_t ip_hlen;  /* IHL * 4 */
	uint32_t ip_tlen;  /* IPv4 total length */
	uint32_t l4_off;   /* ip_off + ip_hlen */
	uint32_t l4_hlen;  /* TCP data offset * 4, or 8 for UDP, 0 otherwise */
	uint8_t proto;
	uint8_t hdr[IO_ETH_HDR_LEN + 60 + 60]; /* copy of L2+IP+L4 headers */
};

/* 1: an IPv4 frame whose headers are consistent with the frame length;
 * 0: not IPv4 (ARP, ...); -1: IPv4 but malformed */
static inline int io_parse_ip4(const struct io_pkt *pkt, struct io_ip4_layout *l)
{
	uint32_t total = io_pkt_total_len(pkt);
	uint32_t n = io_pkt_copy_out(pkt, 0, l->hdr, sizeof(l->hdr));
	if (n < IO_ETH_HDR_LEN || io_rd16(l->hdr + 12) != IO_ETHERTYPE_IP4)
		return 0;
	l->ip_off = IO_ETH_HDR_LEN;
	if (n < l->ip_off + 20 || (l->hdr[l->ip_off] >> 4) != 4)
		return -1;
	l->ip_hlen = (uint32_t) (l->hdr[l->ip_off] & 0xf) * 4;
	l->ip_tlen = io_rd16(l->hdr + l->ip_off + 2);
	l->proto = l->hdr[l->ip_off + 9];
	l->l4_off = l->ip_off + l->ip_hlen;
	l->l4_hlen = 0;
	if (l->ip_hlen < 20 || l->ip_tlen < l->ip_hlen || l->ip_off + l->ip_tlen > total)
		return -1;
	if (io_rd16(l->hdr + l->ip_off + 6) & 0x3fff)
		return 1; /* a fragment: no L4 header to look at */
	if (l->proto == IO_IPPROTO_TCP) {
		if (l->ip_tlen < l->ip_hlen + 20 || n < l->l4_off + 20)
			return -1;
		l->l4_hlen = (uint32_t) (l->hdr[l->l4_off + 12] >> 4) * 4;
		if (l->l4_hlen < 20 || l->ip_tlen < l->ip_hlen + l->l4_hlen || n < l->l4_off + l->l4_hlen)
			return -1;
	} else if (l->proto == IO_IPPROTO_UDP) {
		if (l->ip_tlen < l->ip_hlen + 8 || n < l->l4_off + 8)
			return -1;
		l->l4_hlen = 8;
	}
	return 1;
}

/* ---- transmit ------------------------------------------------------------ */

/* fills the IPv4 header checksum of a linear frame */
static inline void io_fill_ip4_csum(uint8_t *frame, const struct io_ip4_layout *l)
{
	uint8_t *ip = frame + l->ip_off;
	io_wr16(ip + 10, 0);
	io_wr16(ip + 10, (uint16_t) ~io_csum_fold(io_csum_add(ip, l->ip_hlen, 0)));
}

/* fills the TCP or UDP checksum of a linear frame from scratch */
static inline void io_fill_l4_csum(uint8_t *frame, const struct io_ip4_layout *l)
{
	uint8_t *ip = frame + l->ip_off, *l4 = frame + l->l4_off;
	uint32_t l4len = io_rd16(ip + 2) - l->ip_hlen;
	uint8_t *field = l4 + (l->proto == IO_IPPROTO_TCP ? 16 : 6);
	uint16_t c;
	io_wr16(field, 0);
	c = (uint16_t) ~io_csum_fold(io_csum_add(l4, l4len, io_csum_pseudo(ip, l->proto, l4len)));
	if (l->proto == IO_IPPROTO_UDP && c == 0)
		c = 0xffff; /* 0 means "no checksum" in UDP */
	io_wr16(field, c);
}

/* counts whether the L4 checksum field held the pseudo-header sum */
static inline void io_check_pseudo_convention(const struct io_ip4_layout *l, int tso, struct io_offload_stats *st)
{
	const uint8_t *ip = l->hdr + l->ip_off;
	uint32_t l4len = l->ip_tlen - l->ip_hlen;
	uint16_t field = io_rd16(l->hdr + l->l4_off + (l->proto == IO_IPPROTO_TCP ? 16 : 6));
	uint16_t with_len = io_csum_fold(io_csum_pseudo(ip, l->proto, l4len));
	uint16_t without_len = io_csum_fold(io_csum_pseudo(ip, l->proto, 0));
	if (!st)
		return;
	/* 0x0000 and 0xffff are the same value in one's complement */
	if (field == with_len || (tso && field == without_len) ||
	    (field == 0xffff && with_len == 0) || (field == 0 && with_len == 0xffff))
		st->pseudo_ok++;
	else
		st->pseudo_mismatch++;
}

/* cuts a marked TSO frame into MSS-sized frames in out_pool */
static inline int io_tso_segment(struct io_pkt_pool *out_pool, const struct io_pkt *frame,
			  const struct io_ip4_layout *l, uint32_t mss, struct io_pkt **out, int max_out)
{
	uint32_t hdrlen = l->l4_off + l->l4_hlen;
	uint32_t payload = l->ip_tlen - l->ip_hlen - l->l4_hlen, off;
	uint16_t ip_id = io_rd16(l->hdr + l->ip_off + 4);
	uint32_t seq = io_rd32(l->hdr + l->l4_off + 4);
	uint8_t flags = l->hdr[l->l4_off + 13];
	int n = 0;
	for (off = 0; off < payload; off += mss, n++) {
		uint32_t chunk = payload - off < mss ? payload - off : mss;
		struct io_pkt *s;
		uint8_t *f;
		if (n == max_out || !(s = io_pkt_alloc_size(out_pool, hdrlen + chunk)))
			goto fail;
		out[n] = s;
		f = s->data;
		memcpy(f, l->hdr, hdrlen);
		io_pkt_copy_out(frame, hdrlen + off, f + hdrlen, chunk);
		s->len = (uint16_t) (hdrlen + chunk);
		io_wr16(f + l->ip_off + 2, (uint16_t) (l->ip_hlen + l->l4_hlen + chunk));
		io_wr16(f + l->ip_off + 4, (uint16_t) (ip_id + n));
		io_wr32(f + l->l4_off + 4, seq + off);
		f[l->l4_off + 13] = flags;
		if (off + chunk < payload) /* FIN and PSH belong to the last segment only */
			f[l->l4_off + 13] &= (uint8_t) ~(IO_TCP_FLAG_FIN | IO_TCP_FLAG_PSH);
		if (off) /* CWR only on the first, as NICs do */
			f[l->l4_off + 13] &= (uint8_t) ~IO_TCP_FLAG_CWR;
		io_fill_ip4_csum(f, l);
		io_fill_l4_csum(f, l);
	}
	return n;
fail:
	while (n--)
		io_pkt_free(out[n]);
	return -1;
}

/*
 * Produces the frames a NIC would put on the wire for `frame` (a chain the
 * stack pushed): new linear packets allocated in out_pool, stored in out[]
 * (at most max_out). Offload marks are finished: IPv4/TCP/UDP checksums
 * filled, a TSO frame whose payload exceeds the MSS split into segments of
 * MSS = frame->tso_mss, or else mtu - IP header - TCP header (with options).
 * Unmarked frames are copied as they are. The input is not modified nor
 * freed (it may share buffers with the stack's retransmission copy).
 * Returns the number of frames, or -1 (nothing allocated) if the frame is
 * malformed, needs more than max_out segments or a buffer ran out.
 */
static inline int io_pkt_finish_tx_offloads(struct io_pkt_pool *out_pool, const struct io_pkt *frame, uint16_t mtu,
				     struct io_pkt **out, int max_out, struct io_offload_stats *st)
{
	struct io_ip4_layout l;
	uint32_t marks = frame->flags & IO_PKT_F_TX_MASK;
	struct io_pkt *lin;
	int ip4;
	if (st)
		st->frames_in++;
	if (max_out < 1)
		goto fail;
	ip4 = marks ? io_parse_ip4(frame, &l) : 0;
	if (ip4 < 0)
		goto fail;
	if (ip4 && l.proto == IO_IPPROTO_TCP && l.l4_hlen && (marks & IO_PKT_F_TX_TCP_TSO)) {
		uint32_t payload = l.ip_tlen - l.ip_hlen - l.l4_hlen;
		uint32_t mss = frame->tso_mss ? frame->tso_mss
					      : (mtu > l.ip_hlen + l.l4_hlen ? mtu - l.ip_hlen - l.l4_hlen : 0);
		if (!mss)
			goto fail;
		io_check_pseudo_convention(&l, 1, st);
		if (payload > mss) {
			int n = io_tso_segment(out_pool, frame, &l, mss, out, max_out);
			if (n < 0)
				goto fail;
			if (st) {
				st->tso_frames++;
				st->frames_out += (uint64_t) n;
			}
			return n;
		}
		marks |= IO_PKT_F_TX_IP4_CSUM | IO_PKT_F_TX_TCP_CSUM; /* fits: one frame */
	} else if (ip4 && l.l4_hlen && (marks & (IO_PKT_F_TX_TCP_CSUM | IO_PKT_F_TX_UDP_CSUM))) {
		io_check_pseudo_convention(&l, 0, st);
	}
	lin = io_pkt_linearize(out_pool, frame);
	if (!lin)
		goto fail;
	lin->flags &= ~IO_PKT_F_TX_MASK;
	lin->tso_mss = 0;
	if (ip4 && (marks & (IO_PKT_F_TX_IP4_CSUM | IO_PKT_F_TX_TCP_TSO)))
		io_fill_ip4_csum(lin->data, &l);
	if (ip4 && l.l4_hlen &&
	    ((l.proto == IO_IPPROTO_TCP && (marks & (IO_PKT_F_TX_TCP_CSUM | IO_PKT_F_TX_TCP_TSO))) ||
	     (l.proto == IO_IPPROTO_UDP && (marks & IO_PKT_F_TX_UDP_CSUM))))
		io_fill_l4_csum(lin->data, &l);
	out[0] = lin;
	if (st)
		st->frames_out++;
	return 1;
fail:
	if (st)
		st->errors++;
	return -1;
}

/*
 * What a veth pair with GSO on the sender and GRO on the receiver does: the
 * big frame is not cut; the receiver gets it whole. Returns a private copy
 * of the chain in out_pool (same segment layout) with the IPv4 and TCP
 * checksums filled over the whole chain and the transmit marks cleared, or
 * NULL (nothing allocated) when it is not an IPv4/TCP frame or a buffer
 * ran out. The input is neither modified nor freed.
 */
static inline struct io_pkt *io_pkt_finish_unsegmented(struct io_pkt_pool *out_pool, const struct io_pkt *frame)
{
	struct io_ip4_layout l;
	struct io_pkt *c;
	uint8_t *ip, *th;
	uint32_t sum, l4len;
	if (io_parse_ip4(frame, &l) != 1 || l.proto != IO_IPPROTO_TCP || !l.l4_hlen)
		return NULL;
	c = io_pkt_copy_chain(out_pool, frame);
	if (!c)
		return NULL;
	if (c->len < l.l4_off + l.l4_hlen) { /* headers split over segments */
		struct io_pkt *lin = io_pkt_linearize(out_pool, c);
		io_pkt_free(c);
		if (!lin)
			return NULL;
		c = lin;
	}
	c->flags &= ~IO_PKT_F_TX_MASK;
	c->tso_mss = 0;
	ip = c->data + l.ip_off;
	th = c->data + l.l4_off;
	io_fill_ip4_csum(c->data, &l);
	l4len = l.ip_tlen - l.ip_hlen;
	io_wr16(th + 16, 0);
	sum = io_csum_chain(c, l.l4_off, l4len, io_csum_pseudo(ip, IO_IPPROTO_TCP, l4len));
	io_wr16(th + 16, (uint16_t) ~io_csum_fold(sum));
	return c;
}

/* ---- receive --------------------------------------------------------------- */

/*
 * Verifies the checksums of a received frame (any chain layout) and records
 * the result in the head segment: IO_PKT_F_RX_IP4_GOOD when the IPv4 header
 * checksum is right, IO_PKT_F_RX_TCP_GOOD / IO_PKT_F_RX_UDP_GOOD when the L4
 * checksum is right (a UDP checksum of 0, "none", counts as good). Flags of
 * a bad or unparsable frame stay clear, so the stack drops it.
 */
static inline void io_pkt_rx_verify_checksums(struct io_pkt *pkt)
{
	struct io_ip4_layout l;
	uint32_t sum;
	pkt->flags &= ~IO_PKT_F_RX_MASK;
	if (io_parse_ip4(pkt, &l) != 1)
		return;
	if (io_csum_fold(io_csum_add(l.hdr + l.ip_off, l.ip_hlen, 0)) == 0xffff)
		pkt->flags |= IO_PKT_F_RX_IP4_GOOD;
	if (!l.l4_hlen)
		return;
	if (l.proto == IO_IPPROTO_UDP && io_rd16(l.hdr + l.l4_off + 6) == 0) {
		pkt->flags |= IO_PKT_F_RX_UDP_GOOD;
		return;
	}
	sum = io_csum_pseudo(l.hdr + l.ip_off, l.proto, l.ip_tlen - l.ip_hlen);
	sum = io_csum_chain(pkt, l.l4_off, l.ip_tlen - l.ip_hlen, sum);
	if (io_csum_fold(sum) == 0xffff)
		pkt->flags |= (l.proto == IO_IPPROTO_TCP) ? IO_PKT_F_RX_TCP_GOOD : IO_PKT_F_RX_UDP_GOOD;
}

#endif /* IO_COMMON_PKT_OFFLOAD_H */
