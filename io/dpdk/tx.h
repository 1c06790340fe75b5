/*
 * io/dpdk/tx.h — transmission: iip_ops_l2_push / iip_ops_l2_flush.
 *
 * push   picks the port (by the frame's source MAC, then source IPv4, when
 *        there are several), fills the mbuf's offload fields from the
 *        stack's marks, and queues the frame in the thread's buffer for
 *        that port;
 * flush  rte_eth_tx_prepare + rte_eth_tx_burst on the thread's own queue;
 *        what the queue did not take stays buffered for the next flush.
 *
 * Offload fields (DPDK's rules for RTE_MBUF_F_TX_*):
 *   l2_len, l3_len from the frame; l4_len for TCP (data offset) and UDP (8);
 *   IPv4 header checksum field zeroed when the NIC computes it;
 *   TCP/UDP checksum offload: the stack already left the pseudo-header sum
 *   WITH the L4 length in the field, which is what DPDK wants;
 *   TSO: DPDK wants the pseudo-header sum WITHOUT the length, so it is
 *   recomputed (rte_ipv4_phdr_cksum with the TSO flag), and tso_segsz is
 *   MTU - IP header - TCP header of this frame (the stack asks for TSO only
 *   when that equals its MSS, docs/api.md); TSO also requires the IPv4
 *   checksum offload, which is forced on.
 * We also check that the field of a checksum-offloaded frame held the
 * pseudo-header sum the convention promises (counted, never trusted blindly
 * for TSO).
 *
 * Included by main.c.
 */
#ifndef IO_DPDK_TX_H
#define IO_DPDK_TX_H

#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#define DPK_TX_ALL_FLAGS (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | \
			  RTE_MBUF_F_TX_TCP_SEG)

/* the port a frame leaves by: its source MAC names the port, and when ports
 * share a MAC, its source IPv4 address (ARP sender address for ARP) */
static uint16_t dpk_tx_port_index(const struct dpk_thread *t, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t i, by_mac = UINT16_MAX, hits = 0;
	uint32_t src_be = 0;
	if (dpk.nports == 1 || m->data_len < RTE_ETHER_HDR_LEN)
		return dpk.nports == 1 ? 0 : t->cur_port;
	for (i = 0; i < dpk.nports; i++)
		if (memcmp(d + RTE_ETHER_ADDR_LEN, dpk.ports[i].mac.addr_bytes, RTE_ETHER_ADDR_LEN) == 0) {
			if (hits++ == 0)
				by_mac = i;
		}
	if (hits == 1)
		return by_mac;
	if (d[12] == 0x08 && d[13] == 0x00 && m->data_len >= RTE_ETHER_HDR_LEN + 20)
		memcpy(&src_be, d + RTE_ETHER_HDR_LEN + 12, 4);
	else if (d[12] == 0x08 && d[13] == 0x06 && m->data_len >= RTE_ETHER_HDR_LEN + 18)
		memcpy(&src_be, d + RTE_ETHER_HDR_LEN + 14, 4);
	for (i = 0; src_be && i < dpk.nports; i++)
		if (dpk.ports[i].ip4_be == src_be)
			return i;
	return by_mac != UINT16_MAX ? by_mac : t->cur_port;
}

/* does the port do what the marks ask? */
static int dpk_tx_port_honours(const struct dpk_port *p, uint64_t ol, uint64_t l4)
{
	if ((ol & RTE_MBUF_F_TX_IP_CKSUM) && !(p->tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM))
		return 0;
	if (l4 == RTE_MBUF_F_TX_TCP_CKSUM && !(p->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM))
		return 0;
	if (l4 == RTE_MBUF_F_TX_UDP_CKSUM && !(p->tx_offloads & RTE_ETH_TX_OFFLOAD_UDP_CKSUM))
		return 0;
	if ((ol & RTE_MBUF_F_TX_TCP_SEG) && !(p->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_TSO))
		return 0;
	return 1;
}

/*
 * Fills the offload fields of a marked frame. Returns 0, or -1 when the
 * frame is not what its marks say (it is then dropped: sending it with
 * wrong lengths could make a NIC emit garbage or hang a queue).
 * The L4 request is a 2-bit value, not a set of bits: TCP is 01, UDP 11
 * (RTE_MBUF_F_TX_L4_MASK), so it is compared, never tested bitwise.
 */
static int dpk_tx_offload_fields(struct dpk_thread *t, const struct dpk_port *p, struct rte_mbuf *m)
{
	uint64_t ol = m->ol_flags & DPK_TX_ALL_FLAGS, l4;
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv4_hdr *ip;
	uint16_t ihl, l4_len = 0;

	if (!(ol & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG)))
		return 0;
	if (m->data_len < RTE_ETHER_HDR_LEN + sizeof(*ip) || d[12] != 0x08 || d[13] != 0x00)
		return -1;
	ip = (struct rte_ipv4_hdr *) (d + RTE_ETHER_HDR_LEN);
	ihl = (uint16_t) ((ip->version_ihl & 0x0f) * 4);
	if (ihl < sizeof(*ip) || m->data_len < RTE_ETHER_HDR_LEN + ihl)
		return -1;
	if (ol & RTE_MBUF_F_TX_TCP_SEG) /* TSO implies TCP and IPv4 checksums */
		ol = (ol & ~RTE_MBUF_F_TX_L4_MASK) | RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4;
	l4 = ol & RTE_MBUF_F_TX_L4_MASK;
	if (l4 != 0 && l4 != RTE_MBUF_F_TX_TCP_CKSUM && l4 != RTE_MBUF_F_TX_UDP_CKSUM)
		return -1; /* SCTP: never asked for */
	/* a fragment has no L4 header to finish (or only its first part of
	 * the data): a NIC would write into the payload */
	if (l4 && (rte_be_to_cpu_16(ip->fragment_offset) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return -1;
	if (l4 == RTE_MBUF_F_TX_TCP_CKSUM) {
		if (ip->next_proto_id != IPPROTO_TCP || m->data_len < RTE_ETHER_HDR_LEN + ihl + sizeof(struct rte_tcp_hdr))
			return -1;
		l4_len = (uint16_t) ((((const struct rte_tcp_hdr *) ((uint8_t *) ip + ihl))->data_off >> 4) * 4);
		if (l4_len < sizeof(struct rte_tcp_hdr) || m->data_len < RTE_ETHER_HDR_LEN + ihl + l4_len)
			return -1;
	} else if (l4 == RTE_MBUF_F_TX_UDP_CKSUM) {
		if (ip->next_proto_id != IPPROTO_UDP || m->data_len < RTE_ETHER_HDR_LEN + ihl + sizeof(struct rte_udp_hdr))
			return -1;
		l4_len = sizeof(struct rte_udp_hdr);
	}
	if (!dpk_tx_port_honours(p, ol, l4)) {
		t->st.tx_mark_unsupported++; /* a mark the port cannot honour: the stack was told otherwise */
		return -1;
	}
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = ihl;
	m->l4_len = l4_len;
	if (ol & RTE_MBUF_F_TX_IP_CKSUM) {
		ip->hdr_checksum = 0;
		t->st.tx_ip4_csum++;
	}
	if (l4) {
		/* the checksum field, as bytes (DPDK's header structs are packed) */
		uint8_t *field = (uint8_t *) ip + ihl + (l4 == RTE_MBUF_F_TX_TCP_CKSUM
							 ? offsetof(struct rte_tcp_hdr, cksum)
							 : offsetof(struct rte_udp_hdr, dgram_cksum));
		uint16_t held, want = rte_ipv4_phdr_cksum(ip, 0);
		memcpy(&held, field, sizeof(held));
		/* the stack's convention: pseudo-header sum with the length */
		if (held == want)
			t->st.tx_phdr_ok++;
		else
			t->st.tx_phdr_mismatch++;
		if (ol & RTE_MBUF_F_TX_TCP_SEG) {
			uint32_t hdrs = (uint32_t) ihl + l4_len;
			if (p->tso_quirk_l2_in_mtu) /* see port.h */
				hdrs += m->l2_len;
			if (dpk.mtu <= hdrs)
				return -1;
			m->tso_segsz = (uint16_t) (dpk.mtu - hdrs);
			want = rte_ipv4_phdr_cksum(ip, ol); /* DPDK's TSO convention: without the length */
			memcpy(field, &want, sizeof(want));
			t->st.tx_tso++;
			t->st.tx_tso_bytes += m->pkt_len;
		} else if (l4 == RTE_MBUF_F_TX_TCP_CKSUM)
			t->st.tx_tcp_csum++;
		else
			t->st.tx_udp_csum++;
	}
	m->ol_flags = (m->ol_flags & ~DPK_TX_ALL_FLAGS) | ol;
	return 0;
}

/* one contiguous mbuf with the bytes of a chain, for a port without
 * multi-segment transmission; NULL when it does not fit one buffer */
static struct rte_mbuf *dpk_tx_linearize(struct dpk_thread *t, struct rte_mbuf *m)
{
	struct rte_mbuf *n = rte_pktmbuf_alloc(t->pool);
	const struct rte_mbuf *s;
	uint8_t *dst;
	if (!n)
		return NULL;
	if (m->pkt_len > rte_pktmbuf_tailroom(n)) {
		rte_pktmbuf_free(n);
		return NULL;
	}
	dst = rte_pktmbuf_mtod(n, uint8_t *);
	for (s = m; s; s = s->next) {
		memcpy(dst, rte_pktmbuf_mtod(s, const uint8_t *), s->data_len);
		dst += s->data_len;
	}
	n->data_len = (uint16_t) m->pkt_len;
	n->pkt_len = m->pkt_len;
	n->ol_flags = m->ol_flags & DPK_TX_ALL_FLAGS;
	n->l2_len = m->l2_len;
	n->l3_len = m->l3_len;
	n->l4_len = m->l4_len;
	n->tso_segsz = m->tso_segsz;
	return n;
}

static void dpk_capture(const struct rte_mbuf *m);

/*
 * rte_eth_tx_burst takes nothing. Usually the queue is full and drains; but
 * a driver also stops at a frame it refuses (e.g. a TSO frame it cannot
 * segment), and would refuse it forever, blocking everything behind it.
 * After DPK_TX_STUCK_NS without progress the first frame goes, as a NIC
 * would drop it, counted.
 */
static void dpk_tx_unstick(struct dpk_thread *t, uint16_t pi)
{
	struct dpk_txbuf *b = &t->tx[pi];
	uint64_t now = io_clock_now_ns();
	if (!b->stuck_since_ns) {
		b->stuck_since_ns = now;
		return;
	}
	if (now - b->stuck_since_ns < DPK_TX_STUCK_NS || !b->n)
		return;
	if (!t->st.tx_drop_stuck++)
		fprintf(stderr, "dpdk: port %u queue %u: the driver took no frame for %u ms: dropping the first one "
			"(see the device's tx errors at exit; more are counted)\n", dpk.ports[pi].id, t->index,
			DPK_TX_STUCK_NS / 1000000u);
	rte_pktmbuf_free(b->m[0]);
	memmove(b->m, b->m + 1, (size_t) (b->n - 1) * sizeof(b->m[0]));
	b->n--;
	b->stuck_since_ns = now;
}

/* hands the thread's buffered frames for one port to its queue */
static void dpk_tx_flush_port(struct dpk_thread *t, uint16_t pi)
{
	struct dpk_txbuf *b = &t->tx[pi];
	const struct dpk_port *p = &dpk.ports[pi];
	uint16_t ok, sent;
	while (b->n) {
		ok = rte_eth_tx_prepare(p->id, t->index, b->m, b->n);
		if (ok < b->n) { /* the driver refuses frame ok: drop it, keep the rest */
			if (!t->st.tx_prepare_refused++)
				fprintf(stderr, "dpdk: port %u: rte_eth_tx_prepare refused a frame: %s (more are counted)\n",
					p->id, rte_strerror(rte_errno));
			rte_pktmbuf_free(b->m[ok]);
			memmove(&b->m[ok], &b->m[ok + 1], (size_t) (b->n - ok - 1) * sizeof(b->m[0]));
			b->n--;
		}
		if (!ok)
			continue;
		sent = rte_eth_tx_burst(p->id, t->index, b->m, ok);
		t->st.tx_frames += sent;
		if (sent < b->n)
			memmove(b->m, b->m + sent, (size_t) (b->n - sent) * sizeof(b->m[0]));
		b->n = (uint16_t) (b->n - sent);
		if (sent)
			b->stuck_since_ns = 0;
		if (sent < ok) { /* the queue is full; try again at the next flush */
			if (!sent)
				dpk_tx_unstick(t, pi);
			break;
		}
	}
}

static void dpk_tx_flush(struct dpk_thread *t)
{
	uint16_t i;
	for (i = 0; i < dpk.nports; i++)
		if (t->tx[i].n)
			dpk_tx_flush_port(t, i);
}

static uint32_t dpk_tx_pending(const struct dpk_thread *t)
{
	uint32_t n = 0;
	uint16_t i;
	for (i = 0; i < dpk.nports; i++)
		n += t->tx[i].n;
	return n;
}

static void iip_ops_l2_flush(void *opaque)
{
	dpk_tx_flush(dpk_thread_of(opaque));
}

static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct dpk_thread *t = dpk_thread_of(opaque);
	struct rte_mbuf *m = pkt;
	uint16_t pi = dpk_tx_port_index(t, m);
	const struct dpk_port *p = &dpk.ports[pi];
	struct dpk_txbuf *b = &t->tx[pi];

	dpk_mbuf_fix_chain(m);
	if (dpk_tx_offload_fields(t, p, m)) {
		t->st.tx_drop_bad++;
		rte_pktmbuf_free(m);
		return;
	}
	if (m->nb_segs > 1) {
		if (!(p->tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
			struct rte_mbuf *lin = dpk_tx_linearize(t, m);
			rte_pktmbuf_free(m);
			if (!lin) {
				t->st.tx_drop_bad++;
				return;
			}
			m = lin;
			t->st.tx_linearized++;
		} else
			t->st.tx_multiseg++;
	}
	if (m->pkt_len > (uint32_t) p->mtu + RTE_ETHER_HDR_LEN && !(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
		t->st.tx_drop_bad++; /* larger than the link carries */
		rte_pktmbuf_free(m);
		return;
	}
	if (b->n == DPK_TXBUF)
		dpk_tx_flush_port(t, pi);
	if (b->n == DPK_TXBUF) { /* the queue takes nothing: drop, as a full NIC ring would */
		t->st.tx_drop_full++;
		rte_pktmbuf_free(m);
		return;
	}
	t->st.tx_bytes += m->pkt_len;
	dpk_capture(m);
	b->m[b->n++] = m;
}

#endif /* IO_DPDK_TX_H */
