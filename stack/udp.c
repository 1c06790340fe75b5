/*
 * udp.c: UDP (RFC 768, RFC 1122 4.1).
 *
 * Every valid datagram goes to iip_ops_udp_payload, unless the application
 * declared its ports with iip_udp_port_open(): from then on a datagram to a
 * port that is not open gets an ICMP port unreachable (RFC 1122 4.1.3.1).
 * A reassembled datagram arrives as a scatter-gather chain.
 */

static void __iip_udp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque)
{
	void *pkt = rx->pkt;
	uint32_t l4_off = (uint32_t) rx->l3_off + rx->hdr_len;
	struct iip_udp_hdr *udp;
	uint16_t ulen;
	IIP_STATS_INC(ws, rx_udp);
	if (rx->l4_len < sizeof(struct iip_udp_hdr) || iip_ops_pkt_get_len(pkt, opaque) < l4_off + sizeof(struct iip_udp_hdr)) {
		IIP_STATS_INC(ws, rx_udp_malformed);
		goto drop;
	}
	udp = (struct iip_udp_hdr *) ((uint8_t *) rx->ip + rx->hdr_len);
	ulen = __iip_ntohs(udp->len_be);
	if (ulen < sizeof(struct iip_udp_hdr) || ulen > rx->l4_len) {
		IIP_STATS_INC(ws, rx_udp_malformed);
		goto drop;
	}
	/* a zero checksum means the sender computed none (RFC 768) */
	if (udp->csum_be) {
		uint8_t fragmented = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque) != NULL;
		if (!fragmented && iip_ops_nic_feature_offload_udp_rx_checksum(opaque)) {
			if (!iip_ops_nic_offload_udp_rx_checksum(pkt, opaque)) {
				IIP_STATS_INC(ws, rx_udp_bad_csum);
				goto drop;
			}
		} else {
			uint8_t ok = 1;
			uint32_t s = __iip_csum_pseudo(rx->ip->src_be, rx->ip->dst_be, IIP_IP4_PROTO_UDP, ulen);
			s = __iip_csum_add(s, __iip_pkt_csum(pkt, l4_off, ulen, &ok, opaque));
			if (!ok || __iip_csum_finish(s) != 0) {
				IIP_STATS_INC(ws, rx_udp_bad_csum);
				goto drop;
			}
		}
	}
	if (ws->udp_ports_filter && !(ws->udp_ports_open[__iip_ntohs(udp->dst_be) >> 3] & (1U << (__iip_ntohs(udp->dst_be) & 7)))) {
		IIP_STATS_INC(ws, rx_udp_port_closed);
		__iip_icmp_send_error(ws, mac, ip4_be, rx, IIP_ICMP_TYPE_DEST_UNREACH, IIP_ICMP_CODE_PORT_UNREACH, 0, opaque);
		goto drop;
	}
	iip_ops_udp_payload(ws, pkt, opaque);
drop:
	iip_ops_pkt_free(pkt, opaque);
}

/*
 * API (seed 001): sends pkt's data (one segment, no headers) as a UDP
 * datagram.  Returns 0 when the datagram was queued: the stack then owns pkt
 * (it is freed once sent).  Returns non-zero if it was refused (no packet
 * could be allocated, or it exceeds 65507 bytes): pkt still belongs to the
 * caller.  Datagrams larger than the MTU are fragmented.
 */
static __iip_unused_fn uint16_t iip_udp_send(void *context, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			     uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *pkt, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_udp_hdr h;
	struct iip_ip4_tx tx;
	uint32_t plen = iip_ops_pkt_get_len(pkt, opaque);
	uint32_t ulen = plen + sizeof(h);
	uint8_t fits = ulen + sizeof(struct iip_ip4_hdr) <= __iip_mtu(ws);
	uint16_t ret;
	if (ulen + sizeof(struct iip_ip4_hdr) > 65535) {
		IIP_STATS_INC(ws, tx_udp_refused);
		return 1;
	}
	h.src_be = local_port_be;
	h.dst_be = peer_port_be;
	h.len_be = __iip_htons((uint16_t) ulen);
	h.csum_be = 0;
	__iip_memset(&tx, 0, sizeof(tx));
	if (fits && iip_ops_nic_feature_offload_udp_tx_checksum(opaque)) {
		/* the NIC finishes the sum; it expects the pseudo-header sum in place */
		h.csum_be = (uint16_t) __iip_csum_fold32(__iip_csum_pseudo(local_ip4_be, peer_ip4_be, IIP_IP4_PROTO_UDP, (uint16_t) ulen));
		tx.l4_csum_mark = iip_ops_nic_offload_udp_tx_checksum_mark;
	} else {
		uint8_t ok = 1;
		uint32_t s = __iip_csum_pseudo(local_ip4_be, peer_ip4_be, IIP_IP4_PROTO_UDP, (uint16_t) ulen);
		s = __iip_csum_add(s, __iip_csum_raw(&h, sizeof(h)));
		s = __iip_csum_add(s, __iip_pkt_csum(pkt, 0, plen, &ok, opaque));
		h.csum_be = __iip_csum_finish(s);
		if (!h.csum_be)
			h.csum_be = 0xffff; /* RFC 768: a computed zero is sent as all ones */
	}
	tx.l2_src = local_mac;
	tx.l2_dst = peer_mac;
	tx.src_be = local_ip4_be;
	tx.dst_be = peer_ip4_be;
	tx.proto = IIP_IP4_PROTO_UDP;
	tx.l4_hdr = (const uint8_t *) &h;
	tx.l4_hdr_len = sizeof(h);
	tx.payload = pkt;
	tx.payload_off = 0;
	tx.payload_len = plen;
	tx.payload_is_one_seg = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque) == NULL;
	ret = __iip_ip4_send(ws, &tx, opaque);
	if (ret) {
		IIP_STATS_INC(ws, tx_udp_refused);
		__iip_flush_outside_run(ws, opaque);
		return ret;
	}
	IIP_STATS_INC(ws, tx_udp);
	/* sent by copy or by clones of pkt: the original is ours to release */
	iip_ops_pkt_free(pkt, opaque);
	__iip_flush_outside_run(ws, opaque);
	return 0;
}
