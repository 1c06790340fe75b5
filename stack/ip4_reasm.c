/*
 * ip4_reasm.c: fragment reassembly (RFC 791 3.2, RFC 815, RFC 1122 3.3.2).
 *
 * Memory is bounded: IIP_CONF_IP4_REASM_SLOTS datagrams at once (the oldest
 * is evicted for a new one), IIP_CONF_IP4_REASM_MAX_FRAGS fragments each,
 * and a timeout.  Fragments are kept sorted and never overlap: an exact
 * duplicate is dropped alone (links duplicate frames), any other overlap
 * drops the whole datagram, as RFC 5722 asks for IPv6 and modern IPv4 stacks
 * do, since overlaps only serve to evade inspection.
 *
 * A complete datagram is handed on as a scatter-gather chain: the first
 * fragment's packet (link and IP header, first payload bytes) followed by the
 * payload of every other fragment, with the IP header rewritten to describe
 * the whole datagram.
 */

static void __iip_ip4_reasm_drop(struct iip_workspace *ws, struct iip_ip4_reasm *r, void *opaque)
{
	__iip_q_free_all(ws, &r->frags, opaque);
	r->used = 0;
}

static struct iip_ip4_reasm *__iip_ip4_reasm_slot(struct iip_workspace *ws, struct iip_ip4_hdr *ip, void *opaque)
{
	struct iip_ip4_reasm *free_slot = NULL, *oldest = NULL;
	uint32_t i;
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++) {
		struct iip_ip4_reasm *r = &ws->reasm[i];
		if (!r->used) {
			if (!free_slot)
				free_slot = r;
			continue;
		}
		if (r->id_be == ip->id_be && r->src_be == ip->src_be && r->dst_be == ip->dst_be && r->proto == ip->proto)
			return r;
		if (!oldest || __iip_seq_lt(r->expire_ms, oldest->expire_ms))
			oldest = r;
	}
	if (!free_slot) {
		IIP_STATS_INC(ws, rx_ip4_frag_evicted);
		__iip_ip4_reasm_drop(ws, oldest, opaque);
		free_slot = oldest;
	}
	__iip_memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = 1;
	free_slot->id_be = ip->id_be;
	free_slot->src_be = ip->src_be;
	free_slot->dst_be = ip->dst_be;
	free_slot->proto = ip->proto;
	free_slot->expire_ms = ws->now_ms + IIP_CONF_IP4_REASM_TIMEOUT_MS;
	return free_slot;
}

static void __iip_ip4_reasm_input(struct iip_workspace *ws, uint8_t mac[], uint32_t ip4_be, struct iip_ip4_rx *rx, void *opaque)
{
	uint16_t off_field = __iip_ntohs(rx->ip->off_be);
	uint32_t off = (uint32_t) (off_field & IIP_IP4_OFF_MASK) * 8;
	uint32_t len = rx->l4_len;
	uint8_t more = (off_field & IIP_IP4_OFF_MF) != 0;
	struct iip_ip4_reasm *r;
	struct iip_pb *pb, *at;
	IIP_STATS_INC(ws, rx_ip4_frags);
	/* RFC 791: every fragment but the last carries a multiple of 8 bytes;
	 * the datagram may not exceed 65535 bytes; RFC 1858 3.4: a TCP fragment
	 * at offset 8 can only serve to overwrite the header's flags */
	if (!len || (more && (len & 7)) || off + len + rx->hdr_len > 65535
			|| (off == 8 && rx->ip->proto == IIP_IP4_PROTO_TCP)) {
		IIP_STATS_INC(ws, rx_ip4_frag_bad);
		iip_ops_pkt_free(rx->pkt, opaque);
		return;
	}
	if (iip_ops_pkt_scatter_gather_chain_get_next(rx->pkt, opaque)) {
		/* fragments arrive as plain frames; a chained one cannot be trimmed */
		IIP_STATS_INC(ws, rx_ip4_frag_bad);
		iip_ops_pkt_free(rx->pkt, opaque);
		return;
	}
	r = __iip_ip4_reasm_slot(ws, rx->ip, opaque);
	if (!more) {
		if (r->total_len && r->total_len != off + len)
			goto bad;
		/* bytes already held past this end contradict it (and would let
		 * "received == total_len" pass with a hole) */
		if (r->frags.tail && r->frags.tail->off + r->frags.tail->len > off + len)
			goto bad;
		r->total_len = off + len;
	}
	if (r->total_len && off + len > r->total_len)
		goto bad;
	/* find the first fragment at or after this offset; check both neighbours */
	for (at = r->frags.head; at && at->off < off; at = at->next)
		;
	if (at && at->off == off && at->len == len) {
		iip_ops_pkt_free(rx->pkt, opaque); /* exact duplicate */
		return;
	}
	if ((at && at->off < off + len) || (at ? (at->prev && at->prev->off + at->prev->len > off)
					       : (r->frags.tail && r->frags.tail->off + r->frags.tail->len > off)))
		goto bad;
	if (r->frags.cnt >= IIP_CONF_IP4_REASM_MAX_FRAGS)
		goto bad;
	pb = __iip_pb_get(ws, rx->pkt);
	if (!pb) {
		iip_ops_pkt_free(rx->pkt, opaque);
		return;
	}
	pb->off = off;
	pb->len = len;
	pb->l3_off = rx->l3_off;
	pb->seq = rx->hdr_len; /* header length of this fragment */
	__iip_q_insert_before(&r->frags, at, pb);
	r->received += len;
	if (!r->total_len || r->received != r->total_len)
		return;
	/* RFC 791 3.1: the whole, with the first fragment's header (which may
	 * carry options the others lack), must fit the 16-bit total length */
	if (r->frags.head->seq + r->total_len > 65535) {
		IIP_STATS_INC(ws, rx_ip4_frag_bad);
		__iip_ip4_reasm_drop(ws, r, opaque); /* frees this fragment too: it is queued */
		return;
	}
	/* complete: chain the fragments behind the first one */
	{
		struct iip_pb *first = r->frags.head;
		void *head = first->pkt;
		struct iip_ip4_rx whole;
		whole.pkt = head;
		whole.l3_off = first->l3_off;
		whole.ip = (struct iip_ip4_hdr *) ((uint8_t *) iip_ops_pkt_get_data(head, opaque) + first->l3_off);
		whole.hdr_len = (uint16_t) first->seq;
		whole.l4_len = (uint16_t) r->total_len;
		whole.bcast = rx->bcast;
		first->pkt = NULL;
		for (pb = first->next; pb; pb = pb->next) {
			iip_ops_pkt_increment_head(pb->pkt, (uint16_t) (pb->l3_off + pb->seq), opaque);
			iip_ops_pkt_scatter_gather_chain_append(head, pb->pkt, opaque);
			pb->pkt = NULL;
		}
		__iip_q_free_all(ws, &r->frags, opaque); /* wrappers only: packets moved */
		r->used = 0;
		whole.ip->len_be = __iip_htons((uint16_t) (whole.hdr_len + r->total_len));
		whole.ip->off_be = 0;
		whole.ip->csum_be = 0;
		whole.ip->csum_be = __iip_csum_finish(__iip_csum_raw(whole.ip, whole.hdr_len));
		IIP_STATS_INC(ws, rx_ip4_reassembled);
		__iip_ip4_deliver(ws, mac, ip4_be, &whole, opaque);
	}
	return;
bad:
	IIP_STATS_INC(ws, rx_ip4_frag_bad);
	iip_ops_pkt_free(rx->pkt, opaque);
	__iip_ip4_reasm_drop(ws, r, opaque);
}

/* Drops datagrams whose timer ran out (RFC 1122 3.3.2). */
static void __iip_ip4_reasm_timers(struct iip_workspace *ws, void *opaque)
{
	uint32_t i;
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++) {
		struct iip_ip4_reasm *r = &ws->reasm[i];
		if (r->used && __iip_seq_ge(ws->now_ms, r->expire_ms)) {
			IIP_STATS_INC(ws, rx_ip4_frag_timeout);
			__iip_ip4_reasm_drop(ws, r, opaque);
		}
	}
}

/* Milliseconds until the next reassembly timeout, or 0xffffffff if none. */
static uint32_t __iip_ip4_reasm_next_ms(struct iip_workspace *ws)
{
	uint32_t i, next = 0xffffffffU;
	for (i = 0; i < IIP_CONF_IP4_REASM_SLOTS; i++) {
		struct iip_ip4_reasm *r = &ws->reasm[i];
		if (r->used) {
			uint32_t d = __iip_seq_gt(r->expire_ms, ws->now_ms) ? r->expire_ms - ws->now_ms : 0;
			next = __iip_min(next, d);
		}
	}
	return next;
}
