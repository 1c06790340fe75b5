/*
 * io/dpdk/mbuf_ops.h — the stack's packet, link-layer and offload-mark
 * callbacks on DPDK mbufs. The stack's packet object IS an rte_mbuf: what
 * the NIC receives goes to iip_run as it is, and what the stack builds goes
 * to rte_eth_tx_burst as it is (no copy, no wrapper).
 *
 * Semantics (docs/api.md, "Packets"):
 *   alloc   a fresh mbuf of the calling thread's pool (the pool of its NUMA
 *           socket), length 0, data 2 bytes into the headroom so that the IP
 *           header after a 14-byte Ethernet header is 4-byte aligned;
 *   free    the whole chain (rte_pktmbuf_free);
 *   clone   the whole chain (rte_pktmbuf_clone: one indirect mbuf from the
 *           thread's clone pool per segment, buffers shared);
 *   get/set_len, increment_head, decrement_tail: one segment (data_len);
 *   chain_append: rte_pktmbuf_chain semantics, appending a whole chain.
 * The stack may change one segment of a chain, so a head's pkt_len and
 * nb_segs are only trusted after dpk_mbuf_fix_chain() (tx.h calls it for
 * every frame it transmits).
 *
 * The offload marks set DPDK's own TX flags (ol_flags); tx.h fills the
 * header lengths and fixes the pseudo-header for TSO when the frame leaves.
 *
 * Included by main.c after the definitions of struct dpk_thread, dpk and
 * dpk_thread_of().
 */
#ifndef IO_DPDK_MBUF_OPS_H
#define IO_DPDK_MBUF_OPS_H

#include <rte_mbuf.h>
#include <rte_ether.h>

/* see alloc above; RTE_PKTMBUF_HEADROOM (128) leaves plenty of room */
#define DPK_ALIGN_PAD 2

static void *iip_ops_pkt_alloc(void *opaque)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dpk_thread_of(opaque)->pool);
	if (m)
		m->data_off = (uint16_t) (m->data_off + DPK_ALIGN_PAD);
	return m;
}

static void iip_ops_pkt_free(void *pkt, void *opaque)
{
	(void) opaque;
	rte_pktmbuf_free((struct rte_mbuf *) pkt);
}

static void *iip_ops_pkt_get_data(void *pkt, void *opaque)
{
	(void) opaque;
	return rte_pktmbuf_mtod((struct rte_mbuf *) pkt, void *);
}

static uint16_t iip_ops_pkt_get_len(void *pkt, void *opaque)
{
	(void) opaque;
	return ((struct rte_mbuf *) pkt)->data_len;
}

/* pkt_len follows data_len, which is right for a single mbuf and for the
 * head of a chain; for a segment inside a chain pkt_len means nothing */
static void iip_ops_pkt_set_len(void *pkt, uint16_t len, void *opaque)
{
	struct rte_mbuf *m = pkt;
	(void) opaque;
	m->pkt_len = m->pkt_len - m->data_len + len;
	m->data_len = len;
}

static void iip_ops_pkt_increment_head(void *pkt, uint16_t len, void *opaque)
{
	struct rte_mbuf *m = pkt;
	(void) opaque;
	if (len > m->data_len)
		len = m->data_len;
	m->data_off = (uint16_t) (m->data_off + len);
	m->data_len = (uint16_t) (m->data_len - len);
	m->pkt_len -= len;
}

static void iip_ops_pkt_decrement_tail(void *pkt, uint16_t len, void *opaque)
{
	struct rte_mbuf *m = pkt;
	(void) opaque;
	if (len > m->data_len)
		len = m->data_len;
	m->data_len = (uint16_t) (m->data_len - len);
	m->pkt_len -= len;
}

/* indirect mbufs come from a pool without data room: a clone costs one
 * 128-byte descriptor, not a 2 KiB buffer */
static void *iip_ops_pkt_clone(void *pkt, void *opaque)
{
	return rte_pktmbuf_clone((struct rte_mbuf *) pkt, dpk_thread_of(opaque)->clone_pool);
}

static void iip_ops_pkt_scatter_gather_chain_append(void *pkt_head, void *pkt_tail, void *opaque)
{
	struct rte_mbuf *head = pkt_head, *tail = pkt_tail, *s;
	(void) opaque;
	rte_pktmbuf_lastseg(head)->next = tail;
	for (s = tail; s; s = s->next) {
		head->nb_segs++;
		head->pkt_len += s->data_len;
	}
}

static void *iip_ops_pkt_scatter_gather_chain_get_next(void *pkt_head, void *opaque)
{
	(void) opaque;
	return ((struct rte_mbuf *) pkt_head)->next;
}

/* pkt_len and nb_segs of a chain's head from its segments */
static inline void dpk_mbuf_fix_chain(struct rte_mbuf *head)
{
	const struct rte_mbuf *s;
	uint32_t len = 0;
	uint16_t n = 0;
	for (s = head; s; s = s->next) {
		len += s->data_len;
		n++;
	}
	head->pkt_len = len;
	head->nb_segs = n;
}

/* ---- Ethernet ------------------------------------------------------------ */

static uint16_t iip_ops_l2_hdr_len(void *pkt, void *opaque)
{
	(void) pkt;
	(void) opaque;
	return RTE_ETHER_HDR_LEN;
}

static uint8_t *iip_ops_l2_hdr_src_ptr(void *pkt, void *opaque)
{
	(void) opaque;
	return rte_pktmbuf_mtod((struct rte_mbuf *) pkt, uint8_t *) + RTE_ETHER_ADDR_LEN;
}

static uint8_t *iip_ops_l2_hdr_dst_ptr(void *pkt, void *opaque)
{
	(void) opaque;
	return rte_pktmbuf_mtod((struct rte_mbuf *) pkt, uint8_t *);
}

static uint16_t iip_ops_l2_ethertype_be(void *pkt, void *opaque)
{
	uint16_t v;
	(void) opaque;
	memcpy(&v, rte_pktmbuf_mtod((struct rte_mbuf *) pkt, uint8_t *) + 2 * RTE_ETHER_ADDR_LEN, sizeof(v));
	return v;
}

static uint16_t iip_ops_l2_addr_len(void *opaque)
{
	(void) opaque;
	return RTE_ETHER_ADDR_LEN;
}

static void iip_ops_l2_broadcast_addr(uint8_t bcaddr[], void *opaque)
{
	(void) opaque;
	memset(bcaddr, 0xff, RTE_ETHER_ADDR_LEN);
}

static void iip_ops_l2_hdr_craft(void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype_be, void *opaque)
{
	uint8_t *d = rte_pktmbuf_mtod((struct rte_mbuf *) pkt, uint8_t *);
	(void) opaque;
	memcpy(d, dst, RTE_ETHER_ADDR_LEN);
	memcpy(d + RTE_ETHER_ADDR_LEN, src, RTE_ETHER_ADDR_LEN);
	memcpy(d + 2 * RTE_ETHER_ADDR_LEN, &ethertype_be, sizeof(ethertype_be));
}

/* ignore runts and unicast frames for another MAC than the receiving
 * port's (af_packet on a bridge, a promiscuous port) */
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque)
{
	const struct rte_mbuf *m = pkt;
	const uint8_t *dst = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct dpk_port *p = dpk_port_by_id(m->port);
	(void) opaque;
	if (m->data_len < RTE_ETHER_HDR_LEN)
		return 1;
	if (dst[0] & 1) /* broadcast, multicast */
		return 0;
	return p == NULL || memcmp(dst, p->mac.addr_bytes, RTE_ETHER_ADDR_LEN) != 0;
}

static uint8_t iip_ops_arp_lhw(void *opaque)
{
	(void) opaque;
	return RTE_ETHER_ADDR_LEN;
}

static uint8_t iip_ops_arp_lproto(void *opaque)
{
	(void) opaque;
	return 4;
}

/* ---- offload marks (transmit) and results (receive) ---------------------- */

static void iip_ops_nic_offload_ip4_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	((struct rte_mbuf *) pkt)->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
}

static void iip_ops_nic_offload_tcp_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	((struct rte_mbuf *) pkt)->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM;
}

static void iip_ops_nic_offload_tcp_tx_tso_mark(void *pkt, void *opaque)
{
	(void) opaque;
	((struct rte_mbuf *) pkt)->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_SEG;
}

static void iip_ops_nic_offload_udp_tx_checksum_mark(void *pkt, void *opaque)
{
	(void) opaque;
	((struct rte_mbuf *) pkt)->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_UDP_CKSUM;
}

/* never asked for (we report no UDP segmentation offload) */
static void iip_ops_nic_offload_udp_tx_tso_mark(void *pkt, void *opaque)
{
	(void) pkt;
	(void) opaque;
}

/* 1 = the NIC checked and the checksum is good */
static uint8_t iip_ops_nic_offload_ip4_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return (((struct rte_mbuf *) pkt)->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
}

/* GOOD, or NONE: "the checksum in the packet is not correct but the data
 * is known to be intact" (a frame a virtual device got with a partial
 * checksum): both mean the bytes are good */
static inline uint8_t dpk_rx_l4_good(const struct rte_mbuf *m)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	return l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD || l4 == RTE_MBUF_F_RX_L4_CKSUM_NONE;
}

static uint8_t iip_ops_nic_offload_tcp_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return dpk_rx_l4_good((struct rte_mbuf *) pkt);
}

static uint8_t iip_ops_nic_offload_udp_rx_checksum(void *pkt, void *opaque)
{
	(void) opaque;
	return dpk_rx_l4_good((struct rte_mbuf *) pkt);
}

/* ---- what the NIC offers: the features every port has and uses ----------- */

static uint8_t iip_ops_nic_feature_offload_tx_scatter_gather(void *opaque) { (void) opaque; return dpk.feat.tx_sg; }
static uint8_t iip_ops_nic_feature_offload_ip4_rx_checksum(void *opaque) { (void) opaque; return dpk.feat.rx_ip4; }
static uint8_t iip_ops_nic_feature_offload_ip4_tx_checksum(void *opaque) { (void) opaque; return dpk.feat.tx_ip4; }
static uint8_t iip_ops_nic_feature_offload_tcp_rx_checksum(void *opaque) { (void) opaque; return dpk.feat.rx_tcp; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_checksum(void *opaque) { (void) opaque; return dpk.feat.tx_tcp; }
static uint8_t iip_ops_nic_feature_offload_tcp_tx_tso(void *opaque) { (void) opaque; return dpk.feat.tx_tso; }
static uint8_t iip_ops_nic_feature_offload_udp_rx_checksum(void *opaque) { (void) opaque; return dpk.feat.rx_udp; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_checksum(void *opaque) { (void) opaque; return dpk.feat.tx_udp; }
static uint8_t iip_ops_nic_feature_offload_udp_tx_tso(void *opaque) { (void) opaque; return 0; }

#endif /* IO_DPDK_MBUF_OPS_H */
