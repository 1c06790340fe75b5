/*
 * arp.c: ARP (RFC 826).  We answer requests for our address and hand
 * replies addressed to us to the application (iip_ops_arp_reply); the
 * neighbour table itself belongs to the integrator (seed 001: "an ARP table
 * is assumed to be maintained by users").
 */

/* Writes an ARP message into a fresh packet and sends it. */
static uint16_t __iip_arp_output(struct iip_workspace *ws, uint16_t op, uint8_t sha[], uint32_t spa_be,
				 uint8_t tha[], uint32_t tpa_be, uint8_t l2_dst[], void *opaque)
{
	void *out = iip_ops_pkt_alloc(opaque);
	uint8_t lhw = iip_ops_arp_lhw(opaque), lproto = iip_ops_arp_lproto(opaque);
	uint16_t l2_len;
	uint8_t *p;
	if (!out) {
		IIP_STATS_INC(ws, pkt_alloc_failed);
		return 1;
	}
	if (lhw > IIP_CONF_L2ADDR_LEN_MAX || lproto != 4) {
		/* the integrator's link is not one ARP over IPv4 can describe */
		iip_ops_pkt_free(out, opaque);
		return 1;
	}
	l2_len = iip_ops_l2_hdr_len(out, opaque);
	p = (uint8_t *) iip_ops_pkt_get_data(out, opaque) + l2_len;
	{
		struct iip_arp_hdr *arp = (struct iip_arp_hdr *) p;
		arp->hw_be = __iip_htons(IIP_ARP_HW_ETHERNET);
		arp->proto_be = __iip_htons(IIP_ETHERTYPE_IP4);
		arp->lhw = lhw;
		arp->lproto = lproto;
		arp->op_be = __iip_htons(op);
	}
	p += sizeof(struct iip_arp_hdr);
	__iip_memcpy(p, sha, lhw);
	p += lhw;
	__iip_memcpy(p, &spa_be, 4);
	p += 4;
	__iip_memcpy(p, tha, lhw);
	p += lhw;
	__iip_memcpy(p, &tpa_be, 4);
	p += 4;
	{
		/* pad to the Ethernet minimum (60 B without FCS) so every NIC sends it */
		uint16_t len = (uint16_t) (l2_len + sizeof(struct iip_arp_hdr) + 2 * lhw + 8);
		if (len < 60) {
			__iip_memset(p, 0, 60 - len);
			len = 60;
		}
		iip_ops_pkt_set_len(out, len, opaque);
	}
	__iip_l2_output(ws, out, sha, l2_dst, IIP_ETHERTYPE_ARP, opaque);
	return 0;
}

static void __iip_arp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, void *pkt, void *opaque)
{
	uint16_t l2_len = iip_ops_l2_hdr_len(pkt, opaque);
	uint16_t len = iip_ops_pkt_get_len(pkt, opaque);
	uint16_t alen = iip_ops_l2_addr_len(opaque);
	struct iip_arp_hdr *arp;
	uint32_t spa_be, tpa_be;
	IIP_STATS_INC(ws, rx_arp);
	/* validate once: fixed header, then addresses of the lengths it announces */
	if (len < l2_len + sizeof(struct iip_arp_hdr))
		goto malformed;
	arp = PB_ARP(pkt);
	/* RFC 826: "Do I have the hardware type in ar$hrd?" -- we send Ethernet (1) only */
	if (arp->hw_be != __iip_htons(IIP_ARP_HW_ETHERNET)
			|| arp->proto_be != __iip_htons(IIP_ETHERTYPE_IP4) || arp->lproto != 4
			|| arp->lhw != alen || alen > IIP_CONF_L2ADDR_LEN_MAX || alen == 0
			|| len < l2_len + sizeof(struct iip_arp_hdr) + 2 * (uint32_t) arp->lhw + 8)
		goto malformed;
	__iip_memcpy(&spa_be, PB_ARP_IP_SENDER(pkt), 4);
	__iip_memcpy(&tpa_be, PB_ARP_IP_TARGET(pkt), 4);
	switch (__iip_ntohs(arp->op_be)) {
	case IIP_ARP_OP_REQUEST:
		if (tpa_be != ip4_be || !ip4_be) {
			IIP_STATS_INC(ws, rx_arp_not_for_us);
			break;
		}
		{
			uint8_t sha[IIP_CONF_L2ADDR_LEN_MAX];
			__iip_memcpy(sha, PB_ARP_HW_SENDER(pkt), alen);
			if (!__iip_arp_output(ws, IIP_ARP_OP_REPLY, mac, ip4_be, sha, spa_be, sha, opaque))
				IIP_STATS_INC(ws, tx_arp_reply);
		}
		break;
	case IIP_ARP_OP_REPLY:
		if (tpa_be != ip4_be && tpa_be != spa_be /* gratuitous */) {
			IIP_STATS_INC(ws, rx_arp_not_for_us);
			break;
		}
		iip_ops_arp_reply(ws, pkt, opaque);
		break;
	default:
		goto malformed;
	}
	iip_ops_pkt_free(pkt, opaque);
	return;
malformed:
	IIP_STATS_INC(ws, rx_arp_malformed);
	iip_ops_pkt_free(pkt, opaque);
}

/* API (seed 001): broadcast a request for target_ip4_be. */
static __iip_unused_fn void iip_arp_request(void *context, uint8_t local_mac[], uint32_t local_ip4_be, uint32_t target_ip4_be, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	uint8_t bc[IIP_CONF_L2ADDR_LEN_MAX], zero[IIP_CONF_L2ADDR_LEN_MAX];
	__iip_memset(bc, 0xff, sizeof(bc));
	iip_ops_l2_broadcast_addr(bc, opaque);
	__iip_memset(zero, 0, sizeof(zero));
	if (!__iip_arp_output(ws, IIP_ARP_OP_REQUEST, local_mac, local_ip4_be, zero, target_ip4_be, bc, opaque))
		IIP_STATS_INC(ws, tx_arp_request);
	__iip_flush_outside_run(ws, opaque);
}
