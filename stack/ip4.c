/*
 * ip4.c: IPv4 (RFC 791, RFC 1122 3.2.1).  Input validates a datagram once
 * (after this, upper layers trust its header), hands fragments to the
 * reassembler and whole datagrams to ICMP, UDP or TCP.  Output writes
 * headers, computes or offloads the header checksum and fragments datagrams
 * larger than the MTU.
 */

/* A validated datagram as upper layers see it. */
struct iip_ip4_rx {
	void *pkt;
	struct iip_ip4_hdr *ip;
	uint16_t l3_off;	/* offset of the IP header in the first segment */
	uint16_t hdr_len;	/* IP header length in bytes */
	uint16_t l4_len;	/* bytes after the IP header (total length - hdr_len) */
	uint8_t bcast;		/* sent to the limited broadcast address */
};

static void __iip_icmp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque);
static void __iip_udp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque);
static void __iip_tcp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque);
static void __iip_ip4_reasm_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque);
static void __iip_icmp_send_error(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx,
				  uint8_t type, uint8_t code, uint16_t mtu, void *opaque);

static uint16_t __iip_mtu(struct iip_workspace *ws)
{
	return ws->mtu ? ws->mtu : IIP_CONF_MTU;
}

/* RFC 1122 3.2.1.3: addresses a datagram may not come from. */
static uint8_t __iip_ip4_src_is_martian(uint32_t src_be)
{
	uint32_t a = __iip_ntohl(src_be);
	return a == 0xffffffffU		/* limited broadcast */
		|| (a >> 28) == 0xe	/* multicast (class D) */
		|| (a >> 24) == 127	/* loopback */
		|| (a >> 24) == 0;	/* "this network" */
}

/* RFC 791 3.1: options are well formed when each fits in the header. */
static uint8_t __iip_ip4_options_ok(const uint8_t *opt, uint16_t len)
{
	uint16_t i = 0;
	while (i < len) {
		uint8_t type = opt[i];
		if (type == 0)		/* end of option list */
			return 1;
		if (type == 1) {	/* no-operation */
			i++;
			continue;
		}
		if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len)
			return 0;
		/* source routes (RFC 7126 4.3, 4.4): dropped by modern hosts */
		if (type == 131 || type == 137)
			return 0;
		i = (uint16_t) (i + opt[i + 1]);
	}
	return 1;
}

/* Hands a whole, validated datagram to its protocol; takes ownership of its packet. */
static void __iip_ip4_deliver(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque)
{
	switch (rx->ip->proto) {
	case IIP_IP4_PROTO_TCP:
		__iip_tcp_input(ws, mac, ip4_be, rx, opaque);
		break;
	case IIP_IP4_PROTO_UDP:
		__iip_udp_input(ws, mac, ip4_be, rx, opaque);
		break;
	case IIP_IP4_PROTO_ICMP:
		__iip_icmp_input(ws, mac, ip4_be, rx, opaque);
		break;
	default:
		IIP_STATS_INC(ws, rx_ip4_unknown_proto);
		/* RFC 1122 3.2.2.1: protocol unreachable */
		__iip_icmp_send_error(ws, mac, ip4_be, rx, IIP_ICMP_TYPE_DEST_UNREACH, IIP_ICMP_CODE_PROTO_UNREACH, 0, opaque);
		iip_ops_pkt_free(rx->pkt, opaque);
		break;
	}
}

static void __iip_ip4_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, void *pkt, void *opaque)
{
	struct iip_ip4_rx rx;
	uint16_t seg_len = iip_ops_pkt_get_len(pkt, opaque);
	uint32_t frame_len;
	uint16_t total, off;
	IIP_STATS_INC(ws, rx_ip4);
	rx.pkt = pkt;
	rx.l3_off = iip_ops_l2_hdr_len(pkt, opaque);
	rx.bcast = 0;
	if (seg_len < rx.l3_off + sizeof(struct iip_ip4_hdr)) {
		IIP_STATS_INC(ws, rx_ip4_truncated);
		goto drop;
	}
	rx.ip = (struct iip_ip4_hdr *) ((uint8_t *) iip_ops_pkt_get_data(pkt, opaque) + rx.l3_off);
	if ((rx.ip->vl >> 4) != 4) {
		IIP_STATS_INC(ws, rx_ip4_bad_version);
		goto drop;
	}
	rx.hdr_len = (uint16_t) ((rx.ip->vl & 0x0f) * 4);
	if (rx.hdr_len < sizeof(struct iip_ip4_hdr) || seg_len < rx.l3_off + rx.hdr_len) {
		IIP_STATS_INC(ws, rx_ip4_bad_hdr_len);
		goto drop;
	}
	total = __iip_ntohs(rx.ip->len_be);
	/* LRO and reassembly produce chains; a NIC's plain frame is one segment */
	frame_len = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque) ? __iip_pkt_total_len(pkt, opaque) : seg_len;
	if (total < rx.hdr_len || frame_len - rx.l3_off < total) {
		IIP_STATS_INC(ws, rx_ip4_bad_total_len);
		goto drop;
	}
	if (iip_ops_nic_feature_offload_ip4_rx_checksum(opaque)) {
		if (!iip_ops_nic_offload_ip4_rx_checksum(pkt, opaque)) {
			IIP_STATS_INC(ws, rx_ip4_bad_csum);
			goto drop;
		}
	} else if (__iip_csum_finish(__iip_csum_raw(rx.ip, rx.hdr_len)) != 0) {
		IIP_STATS_INC(ws, rx_ip4_bad_csum);
		goto drop;
	}
	if (rx.hdr_len > sizeof(struct iip_ip4_hdr)
			&& !__iip_ip4_options_ok((const uint8_t *) rx.ip + sizeof(struct iip_ip4_hdr),
						 (uint16_t) (rx.hdr_len - sizeof(struct iip_ip4_hdr)))) {
		IIP_STATS_INC(ws, rx_ip4_bad_options);
		goto drop;
	}
	if (__iip_ip4_src_is_martian(rx.ip->src_be)) {
		IIP_STATS_INC(ws, rx_ip4_bad_src);
		goto drop;
	}
	if (rx.ip->dst_be != ip4_be) {
		/* the limited broadcast reaches UDP only (RFC 1122 3.2.2.6: no echo to broadcast) */
		if (rx.ip->dst_be == 0xffffffffU && rx.ip->proto == IIP_IP4_PROTO_UDP)
			rx.bcast = 1;
		else {
			IIP_STATS_INC(ws, rx_ip4_not_for_us);
			goto drop;
		}
	}
	/* Ethernet pads short frames: drop bytes past the datagram */
	if (frame_len - rx.l3_off > total && !iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque))
		iip_ops_pkt_decrement_tail(pkt, (uint16_t) (frame_len - rx.l3_off - total), opaque);
	rx.l4_len = (uint16_t) (total - rx.hdr_len);
	off = __iip_ntohs(rx.ip->off_be);
	if (off & (IIP_IP4_OFF_MF | IIP_IP4_OFF_MASK)) {
		__iip_ip4_reasm_input(ws, mac, ip4_be, &rx, opaque);
		return;
	}
	__iip_ip4_deliver(ws, mac, ip4_be, &rx, opaque);
	return;
drop:
	iip_ops_pkt_free(pkt, opaque);
}

/*
 * Fills an IPv4 header (no options) and its checksum, computed in software or
 * left to the NIC.  frag_off_be carries DF/MF and the offset.
 */
static void __iip_ip4_hdr_fill(struct iip_workspace *ws, void *pkt, struct iip_ip4_hdr *ip, uint8_t proto,
			       uint32_t src_be, uint32_t dst_be, uint16_t total_len, uint16_t id, uint16_t frag_off, void *opaque)
{
	ip->vl = 0x45;
	ip->tos = 0;
	ip->len_be = __iip_htons(total_len);
	ip->id_be = __iip_htons(id);
	ip->off_be = __iip_htons(frag_off);
	ip->ttl = IIP_CONF_IP4_TTL;
	ip->proto = proto;
	ip->csum_be = 0;
	ip->src_be = src_be;
	ip->dst_be = dst_be;
	if (iip_ops_nic_feature_offload_ip4_tx_checksum(opaque))
		iip_ops_nic_offload_ip4_tx_checksum_mark(pkt, opaque);
	else
		ip->csum_be = __iip_csum_finish(__iip_csum_raw(ip, sizeof(*ip)));
	IIP_STATS_INC(ws, tx_ip4);
}

/*
 * A datagram to send, described as an L4 header of up to 64 bytes (already
 * holding its checksum, or the pseudo-header sum with l4_csum_mark set) and
 * a payload taken from a packet chain.
 */
struct iip_ip4_tx {
	uint8_t *l2_src;
	uint8_t *l2_dst;
	uint32_t src_be;
	uint32_t dst_be;
	uint8_t proto;
	uint8_t df;
	void (*l4_csum_mark)(void *pkt, void *opaque);	/* offloaded L4 checksum (unfragmented only) */
	const uint8_t *l4_hdr;
	uint16_t l4_hdr_len;
	void *payload;		/* packet chain holding the payload (not consumed) */
	uint32_t payload_off;
	uint32_t payload_len;
	uint8_t payload_is_one_seg; /* payload is a single segment: may be cloned for zero copy */
};

/*
 * Sends the datagram, fragmenting it (RFC 791 3.2) when it exceeds the MTU.
 * Payload bytes are chained by reference when the NIC does scatter-gather
 * and the payload is one segment, copied otherwise.  Returns 0 when every
 * fragment was queued.
 */
static uint16_t __iip_ip4_send(struct iip_workspace *ws, struct iip_ip4_tx *tx, void *opaque)
{
	uint32_t l4_total = tx->l4_hdr_len + tx->payload_len;
	uint16_t mtu = __iip_mtu(ws);
	uint32_t max_frag = (uint32_t) ((mtu - sizeof(struct iip_ip4_hdr)) & ~7U);
	uint8_t fragmented = l4_total + sizeof(struct iip_ip4_hdr) > mtu;
	uint8_t sg = iip_ops_nic_feature_offload_tx_scatter_gather(opaque) && tx->payload_is_one_seg;
	uint16_t id;
	uint32_t pos = 0;
	if (fragmented && (tx->df || l4_total > 65535 - sizeof(struct iip_ip4_hdr)))
		return 1;
	/* RFC 6864 4.1: atomic datagrams need no unique ID, fragmented ones do */
	id = ws->ip4_id++;
	while (pos < l4_total) {
		uint32_t n = fragmented ? __iip_min(max_frag, l4_total - pos) : l4_total;
		void *out = iip_ops_pkt_alloc(opaque);
		uint16_t l2_len;
		uint8_t *p;
		uint32_t hdr_part = 0, pay_part;
		if (!out) {
			IIP_STATS_INC(ws, pkt_alloc_failed);
			return 1;
		}
		l2_len = iip_ops_l2_hdr_len(out, opaque);
		p = (uint8_t *) iip_ops_pkt_get_data(out, opaque) + l2_len + sizeof(struct iip_ip4_hdr);
		if (pos < tx->l4_hdr_len) {
			hdr_part = __iip_min(tx->l4_hdr_len - pos, n);
			__iip_memcpy(p, tx->l4_hdr + pos, hdr_part);
			p += hdr_part;
		}
		pay_part = n - hdr_part;
		if (pay_part) {
			uint32_t from = tx->payload_off + (pos + hdr_part - tx->l4_hdr_len);
			if (sg) {
				void *c = __iip_pkt_clone_slice(ws, tx->payload, (uint16_t) from, (uint16_t) pay_part, opaque);
				if (!c) {
					iip_ops_pkt_free(out, opaque);
					return 1;
				}
				iip_ops_pkt_set_len(out, (uint16_t) (l2_len + sizeof(struct iip_ip4_hdr) + hdr_part), opaque);
				iip_ops_pkt_scatter_gather_chain_append(out, c, opaque);
			} else {
				__iip_pkt_copy_out(tx->payload, from, pay_part, p, opaque);
				iip_ops_pkt_set_len(out, (uint16_t) (l2_len + sizeof(struct iip_ip4_hdr) + n), opaque);
			}
		} else
			iip_ops_pkt_set_len(out, (uint16_t) (l2_len + sizeof(struct iip_ip4_hdr) + n), opaque);
		{
			uint16_t frag_off = (uint16_t) ((tx->df ? IIP_IP4_OFF_DF : 0)
				| (pos + n < l4_total ? IIP_IP4_OFF_MF : 0) | ((pos / 8) & IIP_IP4_OFF_MASK));
			struct iip_ip4_hdr *ip = (struct iip_ip4_hdr *) ((uint8_t *) iip_ops_pkt_get_data(out, opaque) + l2_len);
			__iip_ip4_hdr_fill(ws, out, ip, tx->proto, tx->src_be, tx->dst_be,
					   (uint16_t) (sizeof(struct iip_ip4_hdr) + n), id, frag_off, opaque);
		}
		if (!fragmented && tx->l4_csum_mark)
			tx->l4_csum_mark(out, opaque);
		if (fragmented)
			IIP_STATS_INC(ws, tx_ip4_frags);
		__iip_l2_output(ws, out, tx->l2_src, tx->l2_dst, IIP_ETHERTYPE_IP4, opaque);
		pos += n;
	}
	return 0;
}
