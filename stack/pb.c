/*
 * pb.c: the packet-buffer layer.  Wrappers (struct iip_pb) come from the pool
 * the integrator filled with iip_add_pb; queues are doubly linked lists of
 * wrappers.  Helpers here also walk scatter-gather chains (total length,
 * checksum over a byte range) so the protocol parts never deal with chains.
 */

static struct iip_pb *__iip_pb_get(struct iip_workspace *ws, void *pkt)
{
	struct iip_pb *pb = ws->pb_pool.head;
	if (__iip_unlikely(!pb)) {
		IIP_STATS_INC(ws, pb_exhausted);
		return NULL;
	}
	ws->pb_pool.head = pb->next;
	ws->pb_pool.cnt--;
	__iip_memset(pb, 0, sizeof(*pb));
	pb->pkt = pkt;
	return pb;
}

/* Returns the wrapper to the pool; the packet it held is not touched. */
static void __iip_pb_put(struct iip_workspace *ws, struct iip_pb *pb)
{
	pb->pkt = NULL;
	pb->next = ws->pb_pool.head;
	ws->pb_pool.head = pb;
	ws->pb_pool.cnt++;
}

/* Frees the packet and returns the wrapper. */
static void __iip_pb_free(struct iip_workspace *ws, struct iip_pb *pb, void *opaque)
{
	if (pb->pkt)
		iip_ops_pkt_free(pb->pkt, opaque);
	__iip_pb_put(ws, pb);
}

static void __iip_q_append(struct iip_pb_queue *q, struct iip_pb *pb)
{
	pb->next = NULL;
	pb->prev = q->tail;
	if (q->tail)
		q->tail->next = pb;
	else
		q->head = pb;
	q->tail = pb;
	q->cnt++;
}

/* Inserts pb before "at" (at == NULL appends). */
static void __iip_q_insert_before(struct iip_pb_queue *q, struct iip_pb *at, struct iip_pb *pb)
{
	if (!at) {
		__iip_q_append(q, pb);
		return;
	}
	pb->next = at;
	pb->prev = at->prev;
	if (at->prev)
		at->prev->next = pb;
	else
		q->head = pb;
	at->prev = pb;
	q->cnt++;
}

static void __iip_q_remove(struct iip_pb_queue *q, struct iip_pb *pb)
{
	if (pb->prev)
		pb->prev->next = pb->next;
	else
		q->head = pb->next;
	if (pb->next)
		pb->next->prev = pb->prev;
	else
		q->tail = pb->prev;
	pb->next = pb->prev = NULL;
	q->cnt--;
}

/* Frees every packet of a queue. */
static void __iip_q_free_all(struct iip_workspace *ws, struct iip_pb_queue *q, void *opaque)
{
	while (q->head) {
		struct iip_pb *pb = q->head;
		__iip_q_remove(q, pb);
		__iip_pb_free(ws, pb, opaque);
	}
}

/* Bytes in a packet, every segment of its chain included. */
static uint32_t __iip_pkt_total_len(void *pkt, void *opaque)
{
	uint32_t len = 0;
	while (pkt) {
		len += iip_ops_pkt_get_len(pkt, opaque);
		pkt = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque);
	}
	return len;
}

/*
 * Partial checksum of len bytes starting off bytes into the packet's chain.
 * Returns the partial sum; *ok is cleared if the chain is shorter than that.
 */
static uint32_t __iip_pkt_csum(void *pkt, uint32_t off, uint32_t len, uint8_t *ok, void *opaque)
{
	uint32_t sum = 0, done = 0;
	while (pkt && len) {
		uint32_t seg = iip_ops_pkt_get_len(pkt, opaque);
		if (off < seg) {
			uint32_t n = __iip_min(seg - off, len);
			uint32_t s = __iip_csum_raw((const uint8_t *) iip_ops_pkt_get_data(pkt, opaque) + off, n);
			sum = __iip_csum_add(sum, (done & 1) ? __iip_csum_swap(s) : s);
			done += n;
			len -= n;
			off = 0;
		} else
			off -= seg;
		pkt = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque);
	}
	if (len)
		*ok = 0;
	return sum;
}

/* Copies len bytes from off bytes into the packet's chain to dst. */
static uint32_t __iip_pkt_copy_out(void *pkt, uint32_t off, uint32_t len, uint8_t *dst, void *opaque)
{
	uint32_t done = 0;
	while (pkt && done < len) {
		uint32_t seg = iip_ops_pkt_get_len(pkt, opaque);
		if (off < seg) {
			uint32_t n = __iip_min(seg - off, len - done);
			__iip_memcpy(dst + done, (const uint8_t *) iip_ops_pkt_get_data(pkt, opaque) + off, n);
			done += n;
			off = 0;
		} else
			off -= seg;
		pkt = iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque);
	}
	return done;
}

/*
 * A clone of bytes [off, off + n) of a one-segment packet, sharing its buffer
 * (zero-copy transmission).  NULL if the integrator had no descriptor left.
 */
static void *__iip_pkt_clone_slice(struct iip_workspace *ws, void *pkt, uint16_t off, uint16_t n, void *opaque)
{
	uint16_t seg = iip_ops_pkt_get_len(pkt, opaque);
	void *c = iip_ops_pkt_clone(pkt, opaque);
	if (__iip_unlikely(!c)) {
		IIP_STATS_INC(ws, pkt_alloc_failed);
		return NULL;
	}
	if (off)
		iip_ops_pkt_increment_head(c, off, opaque);
	if (seg - off > n)
		iip_ops_pkt_decrement_tail(c, (uint16_t) (seg - off - n), opaque);
	return c;
}
