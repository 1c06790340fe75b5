/*
 * icmp.c: ICMP (RFC 792, RFC 1122 3.2.2).  Echo requests are answered (large
 * and fragmented ones too: the reply is fragmented like any datagram), echo
 * replies go to the application, destination-unreachable messages feed TCP's
 * path-MTU discovery, and the errors we originate are rate limited
 * (RFC 1812 4.3.2.8).
 */

static void __iip_tcp_icmp_unreach(struct iip_workspace *ws, uint8_t code, uint16_t mtu, const uint8_t *inner, uint32_t inner_len, void *opaque);

static void __iip_icmp_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque)
{
	void *pkt = rx->pkt;
	uint32_t l4_off = (uint32_t) rx->l3_off + rx->hdr_len;
	struct iip_icmp_hdr *icmp;
	uint8_t ok = 1;
	IIP_STATS_INC(ws, rx_icmp);
	if (rx->l4_len < sizeof(struct iip_icmp_hdr) || iip_ops_pkt_get_len(pkt, opaque) < l4_off + sizeof(struct iip_icmp_hdr)
			|| __iip_csum_finish(__iip_pkt_csum(pkt, l4_off, rx->l4_len, &ok, opaque)) != 0 || !ok) {
		IIP_STATS_INC(ws, rx_icmp_malformed);
		iip_ops_pkt_free(pkt, opaque);
		return;
	}
	icmp = (struct iip_icmp_hdr *) ((uint8_t *) rx->ip + rx->hdr_len);
	switch (icmp->type) {
	case IIP_ICMP_TYPE_ECHO_REQUEST:
		IIP_STATS_INC(ws, rx_icmp_echo_request);
		{
			/* RFC 792: the reply is the request with the type changed; the
			 * checksum is patched rather than recomputed (RFC 1624) */
			struct iip_icmp_hdr h = *icmp;
			struct iip_ip4_tx tx;
			uint16_t old_word, new_word;
			uint8_t *l2src = iip_ops_l2_hdr_src_ptr(pkt, opaque);
			uint8_t peer_mac[IIP_CONF_L2ADDR_LEN_MAX];
			__iip_memcpy(&old_word, &h, 2);
			h.type = IIP_ICMP_TYPE_ECHO_REPLY;
			h.code = icmp->code;
			__iip_memcpy(&new_word, &h, 2);
			h.csum_be = __iip_csum_update16(icmp->csum_be, old_word, new_word);
			/*
			 * RFC 1624 eqn. 3 gives 0x0000 when the words sum to -0; if
			 * every word of the reply is zero they sum to +0 and the
			 * checksum must be 0xffff (an all-zero echo: id, seq, data)
			 */
			if (!h.csum_be && !h.code && !h.echo.id_be && !h.echo.seq_be) {
				uint8_t ok = 1;
				if (!__iip_pkt_csum(pkt, l4_off + sizeof(h), rx->l4_len - sizeof(h), &ok, opaque))
					h.csum_be = 0xffff;
			}
			__iip_memcpy(peer_mac, l2src, iip_ops_l2_addr_len(opaque));
			__iip_memset(&tx, 0, sizeof(tx));
			tx.l2_src = mac;
			tx.l2_dst = peer_mac;
			tx.src_be = ip4_be;
			tx.dst_be = rx->ip->src_be;
			tx.proto = IIP_IP4_PROTO_ICMP;
			tx.l4_hdr = (const uint8_t *) &h;
			tx.l4_hdr_len = sizeof(h);
			tx.payload = pkt;
			tx.payload_off = l4_off + sizeof(h);
			tx.payload_len = rx->l4_len - sizeof(h);
			tx.payload_is_one_seg = 0; /* copy: the request is freed right after */
			if (!__iip_ip4_send(ws, &tx, opaque))
				IIP_STATS_INC(ws, tx_icmp_echo_reply);
		}
		break;
	case IIP_ICMP_TYPE_ECHO_REPLY:
		IIP_STATS_INC(ws, rx_icmp_echo_reply);
		iip_ops_icmp_reply(ws, pkt, opaque);
		break;
	case IIP_ICMP_TYPE_DEST_UNREACH:
		IIP_STATS_INC(ws, rx_icmp_unreach);
		{
			/* the quoted datagram: its IP header and at least 8 bytes (RFC 792) */
			uint32_t avail = iip_ops_pkt_get_len(pkt, opaque) - l4_off - sizeof(struct iip_icmp_hdr);
			uint32_t quoted = __iip_min(avail, rx->l4_len - sizeof(struct iip_icmp_hdr));
			const uint8_t *inner = (const uint8_t *) icmp + sizeof(struct iip_icmp_hdr);
			if (quoted >= sizeof(struct iip_ip4_hdr) && inner[9] == IIP_IP4_PROTO_TCP)
				__iip_tcp_icmp_unreach(ws, icmp->code, __iip_ntohs(icmp->echo.seq_be), inner, quoted, opaque);
		}
		break;
	default:
		IIP_STATS_INC(ws, rx_icmp_other);
		break;
	}
	iip_ops_pkt_free(pkt, opaque);
}

/* Token bucket for the errors we originate (RFC 1812 4.3.2.8). */
static uint8_t __iip_icmp_rate_ok(struct iip_workspace *ws)
{
	uint32_t elapsed = ws->now_ms - ws->icmp_refill_ms;
	if (elapsed >= IIP_CONF_ICMP_RATE_INTERVAL_MS || !ws->icmp_refill_ms) {
		ws->icmp_tokens = IIP_CONF_ICMP_RATE_BURST;
		ws->icmp_refill_ms = ws->now_ms ? ws->now_ms : 1;
	}
	if (!ws->icmp_tokens) {
		IIP_STATS_INC(ws, tx_icmp_rate_limited);
		return 0;
	}
	ws->icmp_tokens--;
	return 1;
}

/*
 * Sends an ICMP error about a received datagram, quoting its header and as
 * much of its data as keeps the error within 576 bytes (RFC 1812 4.3.2.3).
 * RFC 1122 3.2.2: never about an ICMP error, a broadcast (IP or link
 * layer, multicast included), a fragment other than the first, or a
 * datagram from a source that is not one host (IP input already drops the
 * other martians; Class E sources get here).
 */
static void __iip_icmp_send_error(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx,
				  uint8_t type, uint8_t code, uint16_t mtu, void *opaque)
{
	struct iip_icmp_hdr h;
	struct iip_ip4_tx tx;
	uint8_t peer_mac[IIP_CONF_L2ADDR_LEN_MAX];
	uint32_t quote;
	if (rx->bcast || (__iip_ntohs(rx->ip->off_be) & IIP_IP4_OFF_MASK)
			|| __iip_l2_addr_is_group(iip_ops_l2_hdr_dst_ptr(rx->pkt, opaque))
			|| (__iip_ntohl(rx->ip->src_be) >> 28) == 0xf)
		return;
	if (rx->ip->proto == IIP_IP4_PROTO_ICMP) {
		uint32_t l4_off = (uint32_t) rx->l3_off + rx->hdr_len;
		if (iip_ops_pkt_get_len(rx->pkt, opaque) <= l4_off)
			return;
		{
			uint8_t t = ((const uint8_t *) rx->ip)[rx->hdr_len];
			if (t != IIP_ICMP_TYPE_ECHO_REQUEST && t != IIP_ICMP_TYPE_ECHO_REPLY)
				return;
		}
	}
	if (!__iip_icmp_rate_ok(ws))
		return;
	quote = __iip_min((uint32_t) rx->hdr_len + rx->l4_len, 576 - sizeof(struct iip_ip4_hdr) - sizeof(struct iip_icmp_hdr));
	h.type = type;
	h.code = code;
	h.csum_be = 0;
	h.echo.id_be = 0;
	h.echo.seq_be = __iip_htons(mtu); /* RFC 1191 4: next-hop MTU for "fragmentation needed" */
	{
		uint8_t ok = 1;
		uint32_t s = __iip_csum_raw(&h, sizeof(h));
		s = __iip_csum_add(s, __iip_pkt_csum(rx->pkt, rx->l3_off, quote, &ok, opaque));
		h.csum_be = __iip_csum_finish(s);
	}
	__iip_memcpy(peer_mac, iip_ops_l2_hdr_src_ptr(rx->pkt, opaque), iip_ops_l2_addr_len(opaque));
	__iip_memset(&tx, 0, sizeof(tx));
	tx.l2_src = mac;
	tx.l2_dst = peer_mac;
	tx.src_be = ip4_be;
	tx.dst_be = rx->ip->src_be;
	tx.proto = IIP_IP4_PROTO_ICMP;
	tx.l4_hdr = (const uint8_t *) &h;
	tx.l4_hdr_len = sizeof(h);
	tx.payload = rx->pkt;
	tx.payload_off = rx->l3_off;
	tx.payload_len = quote;
	if (!__iip_ip4_send(ws, &tx, opaque))
		IIP_STATS_INC(ws, tx_icmp_unreach);
}
