/*
 * io/common/pkt.h — reference-counted packets for the software backends.
 *
 * A pool owns two arrays: packet descriptors (struct io_pkt) and data
 * buffers. A descriptor points into one buffer (data pointer + length of
 * this segment) and may be chained to further segments (scatter-gather).
 * Buffers are reference counted so that a clone is a new descriptor on
 * the same bytes, exactly like rte_pktmbuf_clone: the TCP stack keeps the
 * original for retransmission while the clone travels to the NIC.
 *
 * Buffers come in two size classes: "normal" (one MTU-sized frame, e.g.
 * 4096 x 2048 B) and "big" (e.g. a few x 65664 B, enough for a whole
 * 64 KiB TSO/LRO frame in one piece). io_pkt_alloc() always hands out a
 * normal buffer; io_pkt_alloc_size() picks the smallest class that fits.
 *
 * THREADING: a pool is NOT thread-safe. It belongs to one thread (one
 * emulated host); every alloc, clone and free of its descriptors and
 * buffers must happen on that thread. A descriptor remembers the pool of
 * its own and of its buffer, so freeing a clone whose buffer lives in
 * another pool is correct as long as both pools belong to the same thread.
 *
 * Header-style: everything is static; a backend's main.c includes this
 * file (after the stack) into the application's single translation unit.
 */
#ifndef IO_COMMON_PKT_H
#define IO_COMMON_PKT_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* transmit marks set by the stack through iip_ops_nic_offload_*_mark */
#define IO_PKT_F_TX_IP4_CSUM (1u << 0)
#define IO_PKT_F_TX_TCP_CSUM (1u << 1)
#define IO_PKT_F_TX_UDP_CSUM (1u << 2)
#define IO_PKT_F_TX_TCP_TSO  (1u << 3)
#define IO_PKT_F_TX_UDP_TSO  (1u << 4)
#define IO_PKT_F_TX_MASK     (0x1fu)
/* receive results recorded by the (emulated) NIC; read back through
 * iip_ops_nic_offload_*_rx_checksum. A flag set means "checked and good". */
#define IO_PKT_F_RX_IP4_GOOD (1u << 8)
#define IO_PKT_F_RX_TCP_GOOD (1u << 9)
#define IO_PKT_F_RX_UDP_GOOD (1u << 10)
#define IO_PKT_F_RX_MASK     (0x700u)

/*
 * Bytes left free at the start of every buffer. 2 puts the IPv4 header that
 * follows a 14-byte Ethernet header on a 4-byte boundary (NET_IP_ALIGN in
 * Linux drivers), so the stack's header structs are accessed aligned. The
 * data pointer of a fresh packet is still "the start of the frame": there
 * is no room meant for prepending headers.
 */
#ifndef IO_PKT_ALIGN_PAD
#define IO_PKT_ALIGN_PAD 2
#endif

enum { IO_PKT_CLASS_NORMAL = 0, IO_PKT_CLASS_BIG = 1, IO_PKT_NCLASS = 2 };

struct io_pkt_pool;

struct io_pkt {
	struct io_pkt_pool *pool;     /* owner of this descriptor */
	struct io_pkt_pool *buf_pool; /* owner of the buffer (refcounted) */
	uint8_t *buf;                 /* start of the buffer */
	uint32_t buf_size;
	uint32_t buf_idx;
	uint8_t buf_class;
	uint8_t in_use;               /* catches double frees */
	uint16_t len;                 /* bytes of this segment at data */
	uint8_t *data;
	uint32_t flags;               /* IO_PKT_F_* */
	uint16_t tso_mss;             /* 0: derive the MSS from the MTU */
	struct io_pkt *next;          /* next segment, or next free descriptor */
};

struct io_pkt_buf_class {
	uint8_t *mem;
	uint32_t count, size;
	uint32_t *refcnt;
	uint32_t *free_stack;
	uint32_t nfree;
};

struct io_pkt_pool {
	struct io_pkt *descs;
	uint32_t ndesc, ndesc_free;
	struct io_pkt *free_desc;
	struct io_pkt_buf_class cls[IO_PKT_NCLASS];
	/* counters, for statistics and leak checks */
	uint64_t n_alloc, n_clone, n_free, n_alloc_fail, n_double_free;
};

/* ---- pool ---------------------------------------------------------------- */

static inline void io_pkt_pool_destroy(struct io_pkt_pool *p)
{
	int c;
	for (c = 0; c < IO_PKT_NCLASS; c++) {
		free(p->cls[c].mem);
		free(p->cls[c].refcnt);
		free(p->cls[c].free_stack);
	}
	free(p->descs);
	memset(p, 0, sizeof(*p));
}

static inline int io_pkt_buf_class_init(struct io_pkt_buf_class *c, uint32_t count, uint32_t size)
{
	uint32_t i;
	c->count = count;
	c->size = size;
	c->nfree = count;
	if (!count)
		return 0;
	c->mem = malloc((size_t) count * size);
	c->refcnt = calloc(count, sizeof(uint32_t));
	c->free_stack = malloc((size_t) count * sizeof(uint32_t));
	if (!c->mem || !c->refcnt || !c->free_stack)
		return -1;
	for (i = 0; i < count; i++) /* lowest index on top: easier debugging */
		c->free_stack[i] = count - 1 - i;
	return 0;
}

/*
 * ndesc descriptors, nbuf normal buffers of bufsize bytes, nbig big buffers
 * of bigsize bytes (nbig may be 0). Returns 0, or -1 with the pool empty.
 */
static inline int io_pkt_pool_init(struct io_pkt_pool *p, uint32_t ndesc, uint32_t nbuf, uint32_t bufsize,
			    uint32_t nbig, uint32_t bigsize)
{
	uint32_t i;
	memset(p, 0, sizeof(*p));
	if (!ndesc || !nbuf || bufsize < 64 || (nbig && bigsize < bufsize))
		return -1;
	p->descs = calloc(ndesc, sizeof(struct io_pkt));
	if (!p->descs)
		goto fail;
	p->ndesc = p->ndesc_free = ndesc;
	for (i = 0; i < ndesc; i++) {
		p->descs[i].pool = p;
		p->descs[i].next = (i + 1 < ndesc) ? &p->descs[i + 1] : NULL;
	}
	p->free_desc = &p->descs[0];
	if (io_pkt_buf_class_init(&p->cls[IO_PKT_CLASS_NORMAL], nbuf, bufsize) ||
	    io_pkt_buf_class_init(&p->cls[IO_PKT_CLASS_BIG], nbig, nbig ? bigsize : 0))
		goto fail;
	return 0;
fail:
	io_pkt_pool_destroy(p);
	return -1;
}

static inline struct io_pkt *io_pkt_desc_get(struct io_pkt_pool *p)
{
	struct io_pkt *d = p->free_desc;
	if (!d)
		return NULL;
	p->free_desc = d->next;
	p->ndesc_free--;
	d->next = NULL;
	d->in_use = 1;
	d->pool = p;
	return d;
}

static inline void io_pkt_desc_put(struct io_pkt *d)
{
	struct io_pkt_pool *p = d->pool;
	d->in_use = 0;
	d->next = p->free_desc;
	p->free_desc = d;
	p->ndesc_free++;
}

/* one segment, buffer of class cls; NULL when descriptors or buffers run out */
static inline struct io_pkt *io_pkt_alloc_class(struct io_pkt_pool *p, int cls)
{
	struct io_pkt_buf_class *c = &p->cls[cls];
	struct io_pkt *d;
	uint32_t idx;
	if (!c->nfree || !p->free_desc) {
		p->n_alloc_fail++;
		return NULL;
	}
	d = io_pkt_desc_get(p);
	idx = c->free_stack[--c->nfree];
	c->refcnt[idx] = 1;
	d->buf_pool = p;
	d->buf_class = (uint8_t) cls;
	d->buf_idx = idx;
	d->buf_size = c->size;
	d->buf = c->mem + (size_t) idx * c->size;
	d->data = d->buf + IO_PKT_ALIGN_PAD; /* the stack writes the L2 header at data+0 */
	d->len = 0;
	d->flags = 0;
	d->tso_mss = 0;
	p->n_alloc++;
	return d;
}

static inline struct io_pkt *io_pkt_alloc(struct io_pkt_pool *p)
{
	return io_pkt_alloc_class(p, IO_PKT_CLASS_NORMAL);
}

/* a segment able to hold size bytes: normal if it fits, else big */
static inline struct io_pkt *io_pkt_alloc_size(struct io_pkt_pool *p, uint32_t size)
{
	if (size + IO_PKT_ALIGN_PAD <= p->cls[IO_PKT_CLASS_NORMAL].size)
		return io_pkt_alloc_class(p, IO_PKT_CLASS_NORMAL);
	if (size + IO_PKT_ALIGN_PAD <= p->cls[IO_PKT_CLASS_BIG].size)
		return io_pkt_alloc_class(p, IO_PKT_CLASS_BIG);
	p->n_alloc_fail++;
	return NULL;
}

static inline void io_pkt_free_seg(struct io_pkt *d)
{
	struct io_pkt_buf_class *c;
	if (!d->in_use) { /* never corrupt the free lists; count and survive */
		d->pool->n_double_free++;
		return;
	}
	c = &d->buf_pool->cls[d->buf_class];
	if (--c->refcnt[d->buf_idx] == 0)
		c->free_stack[c->nfree++] = d->buf_idx;
	d->pool->n_free++;
	io_pkt_desc_put(d);
}

/* frees every segment of the chain (like rte_pktmbuf_free) */
static inline void io_pkt_free(struct io_pkt *pkt)
{
	while (pkt) {
		struct io_pkt *next = pkt->next;
		if (!pkt->in_use) { /* already free: its next is the free list */
			io_pkt_free_seg(pkt);
			return;
		}
		io_pkt_free_seg(pkt);
		pkt = next;
	}
}

/* new descriptor in pool p on the same buffer bytes as seg (one segment) */
static inline struct io_pkt *io_pkt_clone_seg(struct io_pkt_pool *p, const struct io_pkt *seg)
{
	struct io_pkt *d = io_pkt_desc_get(p);
	if (!d) {
		p->n_alloc_fail++;
		return NULL;
	}
	d->buf_pool = seg->buf_pool;
	d->buf = seg->buf;
	d->buf_size = seg->buf_size;
	d->buf_idx = seg->buf_idx;
	d->buf_class = seg->buf_class;
	d->data = seg->data;
	d->len = seg->len;
	d->flags = seg->flags;
	d->tso_mss = seg->tso_mss;
	seg->buf_pool->cls[seg->buf_class].refcnt[seg->buf_idx]++;
	p->n_clone++;
	return d;
}

/* clones every segment of a chain; NULL (nothing leaked) if p runs out */
static inline struct io_pkt *io_pkt_clone(struct io_pkt_pool *p, const struct io_pkt *pkt)
{
	struct io_pkt *head = NULL, *tail = NULL;
	for (; pkt; pkt = pkt->next) {
		struct io_pkt *d = io_pkt_clone_seg(p, pkt);
		if (!d) {
			io_pkt_free(head);
			return NULL;
		}
		if (tail)
			tail->next = d;
		else
			head = d;
		tail = d;
	}
	return head;
}

/* appends tail (itself possibly a chain) after the last segment of head */
static inline void io_pkt_chain_append(struct io_pkt *head, struct io_pkt *tail)
{
	while (head->next)
		head = head->next;
	head->next = tail;
}

static inline struct io_pkt *io_pkt_next(const struct io_pkt *pkt)
{
	return pkt->next;
}

static inline uint32_t io_pkt_total_len(const struct io_pkt *pkt)
{
	uint32_t n = 0;
	for (; pkt; pkt = pkt->next)
		n += pkt->len;
	return n;
}

static inline uint32_t io_pkt_nsegs(const struct io_pkt *pkt)
{
	uint32_t n = 0;
	for (; pkt; pkt = pkt->next)
		n++;
	return n;
}

/* room left in this segment's buffer after data */
static inline uint32_t io_pkt_room(const struct io_pkt *seg)
{
	return (uint32_t) (seg->buf + seg->buf_size - seg->data);
}

/* sets this segment's length, clamped to what its buffer can hold */
static inline void io_pkt_set_len(struct io_pkt *seg, uint32_t len)
{
	uint32_t room = io_pkt_room(seg);
	if (len > room)
		len = room;
	if (len > UINT16_MAX)
		len = UINT16_MAX;
	seg->len = (uint16_t) len;
}

/* drops n bytes at the front of this segment (rte_pktmbuf_adj), clamped */
static inline void io_pkt_adj(struct io_pkt *seg, uint16_t n)
{
	if (n > seg->len)
		n = seg->len;
	seg->data += n;
	seg->len -= n;
}

/* drops n bytes at the end of this segment (rte_pktmbuf_trim), clamped */
static inline void io_pkt_trim(struct io_pkt *seg, uint16_t n)
{
	if (n > seg->len)
		n = seg->len;
	seg->len -= n;
}

/* copies up to len bytes starting at byte off of the chain; returns the count */
static inline uint32_t io_pkt_copy_out(const struct io_pkt *pkt, uint32_t off, void *dst, uint32_t len)
{
	uint8_t *out = dst;
	uint32_t done = 0;
	for (; pkt && done < len; pkt = pkt->next) {
		uint32_t n;
		if (off >= pkt->len) {
			off -= pkt->len;
			continue;
		}
		n = pkt->len - off;
		if (n > len - done)
			n = len - done;
		memcpy(out + done, pkt->data + off, n);
		done += n;
		off = 0;
	}
	return done;
}

/* copies the whole chain into one new segment of pool p (flags and TSO
 * info kept); NULL if no buffer is big enough or p ran out. The input is
 * left untouched: the caller still owns and frees it. */
static inline struct io_pkt *io_pkt_linearize(struct io_pkt_pool *p, const struct io_pkt *pkt)
{
	uint32_t total = io_pkt_total_len(pkt);
	struct io_pkt *d;
	if (total > UINT16_MAX)
		return NULL;
	d = io_pkt_alloc_size(p, total);
	if (!d)
		return NULL;
	io_pkt_copy_out(pkt, 0, d->data, total);
	d->len = (uint16_t) total;
	d->flags = pkt->flags;
	d->tso_mss = pkt->tso_mss;
	return d;
}

/* copies the chain segment by segment into new private buffers of p,
 * keeping the segment layout; NULL (nothing leaked) on failure */
static inline struct io_pkt *io_pkt_copy_chain(struct io_pkt_pool *p, const struct io_pkt *pkt)
{
	struct io_pkt *head = NULL, *tail = NULL;
	for (; pkt; pkt = pkt->next) {
		struct io_pkt *d = io_pkt_alloc_size(p, pkt->len);
		if (!d) {
			io_pkt_free(head);
			return NULL;
		}
		memcpy(d->data, pkt->data, pkt->len);
		d->len = pkt->len;
		d->flags = pkt->flags;
		d->tso_mss = pkt->tso_mss;
		if (tail)
			tail->next = d;
		else
			head = d;
		tail = d;
	}
	return head;
}

/* ---- accounting ---------------------------------------------------------- */

static inline uint32_t io_pkt_pool_descs_in_use(const struct io_pkt_pool *p)
{
	return p->ndesc - p->ndesc_free;
}

static inline uint32_t io_pkt_pool_bufs_in_use(const struct io_pkt_pool *p)
{
	return (p->cls[0].count - p->cls[0].nfree) + (p->cls[1].count - p->cls[1].nfree);
}

/* prints one line; returns the number of leaked objects (0 = all returned) */
static inline uint32_t io_pkt_pool_report(const struct io_pkt_pool *p, FILE *f, const char *name)
{
	uint32_t leaked = io_pkt_pool_descs_in_use(p) + io_pkt_pool_bufs_in_use(p);
	fprintf(f, "%s: pool alloc %llu clone %llu free %llu alloc-fail %llu double-free %llu; "
		   "in use: %u descriptors, %u buffers -> %s\n",
		name, (unsigned long long) p->n_alloc, (unsigned long long) p->n_clone,
		(unsigned long long) p->n_free, (unsigned long long) p->n_alloc_fail,
		(unsigned long long) p->n_double_free, io_pkt_pool_descs_in_use(p),
		io_pkt_pool_bufs_in_use(p), leaked || p->n_double_free ? "LEAK/ERROR" : "all returned");
	return leaked + (uint32_t) p->n_double_free;
}

#endif /* IO_COMMON_PKT_H */
