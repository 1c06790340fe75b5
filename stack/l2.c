/*
 * l2.c: the link layer boundary.  Frames come in through __iip_l2_input and
 * leave through __iip_l2_output; everything in between is the link's
 * business only through the iip_ops_l2_* callbacks, so the core does not
 * assume Ethernet beyond an address length of at most
 * IIP_CONF_L2ADDR_LEN_MAX.
 */

static void __iip_arp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, void *pkt, void *opaque);
static void __iip_ip4_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, void *pkt, void *opaque);

/* Crafts the link header of a frame whose payload is already written, and queues it. */
static void __iip_l2_output(struct iip_workspace *ws, void *pkt, uint8_t src[], uint8_t dst[], uint16_t ethertype, void *opaque)
{
	iip_ops_l2_hdr_craft(pkt, src, dst, __iip_htons(ethertype), opaque);
	iip_ops_l2_push(pkt, opaque);
	ws->pkts_pushed++;
}

/*
 * Frames queued by an API call made outside iip_run (from the app's loop) go
 * out at once; inside iip_run they wait for the flush at the end of the batch.
 */
static void __iip_flush_outside_run(struct iip_workspace *ws, void *opaque)
{
	if (!ws->in_run && ws->pkts_pushed) {
		ws->pkts_pushed = 0;
		iip_ops_l2_flush(opaque);
	}
}

static uint8_t __iip_l2_addr_is_group(const uint8_t *a)
{
	return (a[0] & 1) != 0; /* IEEE 802: I/G bit, broadcast and multicast */
}

static void __iip_l2_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, void *pkt, void *opaque)
{
	uint16_t ethertype;
	IIP_STATS_INC(ws, rx_frames);
	if (iip_ops_l2_skip(pkt, opaque)) {
		IIP_STATS_INC(ws, rx_l2_skipped);
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	if (iip_ops_pkt_get_len(pkt, opaque) < iip_ops_l2_hdr_len(pkt, opaque)) {
		IIP_STATS_INC(ws, rx_l2_not_for_us);
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	{
		/* NICs in promiscuous mode (tap, AF_PACKET) hand us other hosts' unicast */
		const uint8_t *dst = iip_ops_l2_hdr_dst_ptr(pkt, opaque);
		if (!__iip_l2_addr_is_group(dst) && __iip_memcmp(dst, mac, iip_ops_l2_addr_len(opaque))) {
			IIP_STATS_INC(ws, rx_l2_not_for_us);
			iip_ops_pkt_free(pkt, opaque);
			return;
		}
	}
	ethertype = __iip_ntohs(iip_ops_l2_ethertype_be(pkt, opaque));
	switch (ethertype) {
	case IIP_ETHERTYPE_IP4:
		__iip_ip4_input(ws, mac, ip4_be, pkt, opaque);
		break;
	case IIP_ETHERTYPE_ARP:
		__iip_arp_input(ws, mac, ip4_be, pkt, opaque);
		break;
	default:
		IIP_STATS_INC(ws, rx_l2_unknown_ethertype);
		iip_ops_pkt_free(pkt, opaque);
		break;
	}
}
