/*
 * io/af_xdp/umem.h — one thread's UMEM: the frames an AF_XDP socket
 * receives into and transmits from, handed to the stack as reference-counted
 * packets.
 *
 * The frames are the buffers of an io/common/pkt.h pool (one size class,
 * frame_size bytes each), so the packet callbacks of io/common/pkt_ops.h and
 * the Ethernet callbacks of io/common/eth_ops.h work on them unchanged:
 *
 *   - a received frame becomes a packet descriptor over that frame
 *     (reference count 1); a clone is a new descriptor on the same frame
 *     (count + 1); when the count drops to 0 the frame goes back to the free
 *     list, and from there to the fill ring (afx_umem_refill) or to the
 *     stack's next iip_ops_pkt_alloc;
 *   - a packet the stack builds is a free frame (data = frame + 2, so the
 *     IPv4 header after the 14-byte Ethernet header is 4-byte aligned) and
 *     is transmitted from where it lies: its TX descriptor points into the
 *     frame, and the backend keeps the packet until the completion ring
 *     gives the frame back (afx_txq_*), then frees it.
 *
 * Frame ownership at any moment: free list (pool), kernel (fill ring or
 * not yet consumed RX descriptors: `in_kernel`), TX in flight (`txq`), or a
 * packet held by the stack or the application. afx_umem_report prints the
 * split, which is how leaks are found.
 *
 * Received frames: the kernel writes a frame at
 *   frame start + frame_headroom (UMEM config) + XDP_PACKET_HEADROOM (256)
 * and the RX descriptor's addr points there (aligned mode: addr is the
 * frame's offset in the UMEM plus that data offset). We use frame_headroom
 * = 2, so the data starts at 258: the IPv4 header at 272, 4-byte aligned.
 * The backend checks the offset of every RX descriptor against the frame
 * bounds and counts the offsets it saw (see README.md "Frame layout").
 *
 * Threading: everything here belongs to one thread.
 */
#ifndef IO_AF_XDP_UMEM_H
#define IO_AF_XDP_UMEM_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "../common/pkt.h"

/* frame_headroom of the UMEM: 2 (mod 4) puts the IPv4 header on a 4-byte
 * boundary after XDP_PACKET_HEADROOM (256) and the 14-byte Ethernet header */
#define AFX_UMEM_FRAME_HEADROOM 2u

struct afx_umem {
	uint8_t *area;
	size_t area_size;
	uint32_t frame_size, nframes;
	struct xsk_umem *umem;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	uint32_t fill_size, comp_size;
	uint32_t in_kernel;          /* frames in the fill ring or unread RX descriptors */
	uint32_t keep_free;          /* frames the fill ring never takes: the stack's TX needs some */
	uint64_t rx_bad_desc;        /* RX descriptor outside the UMEM or its frame */
	uint64_t rx_no_desc;         /* no packet descriptor left: frame dropped */
	uint64_t rx_offset_seen;     /* data offset of the first RX descriptor */
};

/*
 * Sets up pool p over the UMEM frames (instead of malloc'd buffers): ndesc
 * packet descriptors, u->nframes frames of u->frame_size bytes at u->area,
 * all free. The pool's memory for the frames is the UMEM: afx_pool_destroy
 * detaches it before io_pkt_pool_destroy frees the rest.
 */
static inline int afx_pool_init(struct io_pkt_pool *p, struct afx_umem *u, uint32_t ndesc)
{
	struct io_pkt_buf_class *c = &p->cls[IO_PKT_CLASS_NORMAL];
	uint32_t i;
	memset(p, 0, sizeof(*p));
	p->descs = calloc(ndesc, sizeof(struct io_pkt));
	c->refcnt = calloc(u->nframes, sizeof(uint32_t));
	c->free_stack = malloc((size_t) u->nframes * sizeof(uint32_t));
	if (!p->descs || !c->refcnt || !c->free_stack) {
		io_pkt_pool_destroy(p);
		return -1;
	}
	p->ndesc = p->ndesc_free = ndesc;
	for (i = 0; i < ndesc; i++) {
		p->descs[i].pool = p;
		p->descs[i].next = (i + 1 < ndesc) ? &p->descs[i + 1] : NULL;
	}
	p->free_desc = &p->descs[0];
	c->mem = u->area;
	c->count = u->nframes;
	c->size = u->frame_size;
	c->nfree = u->nframes;
	for (i = 0; i < u->nframes; i++) /* frame 0 on top */
		c->free_stack[i] = u->nframes - 1 - i;
	return 0;
}

static inline void afx_pool_destroy(struct io_pkt_pool *p)
{
	p->cls[IO_PKT_CLASS_NORMAL].mem = NULL; /* the UMEM is unmapped by afx_umem_destroy */
	io_pkt_pool_destroy(p);
}

/* maps the UMEM area and registers it; returns 0 or -errno */
static inline int afx_umem_create(struct afx_umem *u, uint32_t nframes, uint32_t frame_size, uint32_t fill_size,
			   uint32_t comp_size)
{
	struct xsk_umem_config cfg;
	int rc;
	memset(u, 0, sizeof(*u));
	u->nframes = nframes;
	u->frame_size = frame_size;
	u->fill_size = fill_size;
	u->comp_size = comp_size;
	u->area_size = (size_t) nframes * frame_size;
	u->area = mmap(NULL, u->area_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (u->area == MAP_FAILED) {
		u->area = NULL;
		return -errno;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fill_size = fill_size;
	cfg.comp_size = comp_size;
	cfg.frame_size = frame_size;
	cfg.frame_headroom = AFX_UMEM_FRAME_HEADROOM;
	cfg.flags = 0; /* aligned chunks: a descriptor's frame is addr / frame_size */
	rc = xsk_umem__create(&u->umem, u->area, u->area_size, &u->fill, &u->comp, &cfg);
	if (rc) {
		munmap(u->area, u->area_size);
		u->area = NULL;
		u->umem = NULL;
		return rc < 0 ? rc : -rc;
	}
	return 0;
}

static inline void afx_umem_destroy(struct afx_umem *u)
{
	if (u->umem)
		xsk_umem__delete(u->umem);
	if (u->area)
		munmap(u->area, u->area_size);
	u->umem = NULL;
	u->area = NULL;
}

/* gives free frames to the kernel, keeping u->keep_free for the stack;
 * returns how many were added */
static inline uint32_t afx_umem_refill(struct afx_umem *u, struct io_pkt_pool *p)
{
	struct io_pkt_buf_class *c = &p->cls[IO_PKT_CLASS_NORMAL];
	uint32_t want = u->fill_size - u->in_kernel, avail, got, idx = 0, i;
	if (u->in_kernel >= u->fill_size)
		return 0;
	avail = c->nfree > u->keep_free ? c->nfree - u->keep_free : 0;
	if (want > avail)
		want = avail;
	if (!want)
		return 0;
	avail = xsk_prod_nb_free(&u->fill, want); /* reserve is all-or-nothing */
	if (want > avail)
		want = avail;
	got = want ? xsk_ring_prod__reserve(&u->fill, want, &idx) : 0;
	for (i = 0; i < got; i++) {
		uint32_t frame = c->free_stack[--c->nfree];
		*xsk_ring_prod__fill_addr(&u->fill, idx + i) = (uint64_t) frame * u->frame_size;
	}
	if (got) {
		xsk_ring_prod__submit(&u->fill, got);
		u->in_kernel += got;
	}
	return got;
}

/*
 * Turns one RX descriptor into a packet of pool p (reference count 1 on its
 * frame). NULL if the descriptor is bad (counted; cannot happen with a
 * correct kernel) or p has no descriptor left (counted; the frame goes back
 * to the free list, i.e. the frame is dropped).
 */
static inline struct io_pkt *afx_umem_rx_packet(struct afx_umem *u, struct io_pkt_pool *p, uint64_t addr, uint32_t len)
{
	struct io_pkt_buf_class *c = &p->cls[IO_PKT_CLASS_NORMAL];
	uint64_t frame = addr / u->frame_size, off = addr % u->frame_size;
	struct io_pkt *d;
	if (u->in_kernel)
		u->in_kernel--;
	if (frame >= u->nframes || off + len > u->frame_size || len > UINT16_MAX) {
		u->rx_bad_desc++;
		return NULL; /* the frame index is unusable: it stays lost (counted) */
	}
	if (!u->rx_offset_seen)
		u->rx_offset_seen = off;
	d = io_pkt_desc_get(p);
	if (!d) {
		u->rx_no_desc++;
		c->free_stack[c->nfree++] = (uint32_t) frame;
		return NULL;
	}
	c->refcnt[frame] = 1;
	d->buf_pool = p;
	d->buf_class = IO_PKT_CLASS_NORMAL;
	d->buf_idx = (uint32_t) frame;
	d->buf_size = u->frame_size;
	d->buf = u->area + frame * u->frame_size;
	d->data = u->area + addr;
	d->len = (uint16_t) len;
	d->flags = 0;
	d->tso_mss = 0;
	p->n_alloc++;
	return d;
}

/* ---- TX in flight ---------------------------------------------------------
 * Packets whose frame is in the TX ring or not yet returned through the
 * completion ring, oldest first. The kernel writes completion addresses in
 * the order it took the TX descriptors (copy mode reserves the completion
 * slot when it consumes the descriptor; zero-copy drivers complete in ring
 * order), so the oldest entry matches the next completion; every completion
 * address is still compared with it and a mismatch counted.
 */
struct afx_txq {
	struct io_pkt **pkt;
	uint32_t mask, head, tail;   /* head: oldest; tail: next free */
	uint64_t comp_mismatch;
};

static inline int afx_txq_init(struct afx_txq *q, uint32_t capacity_pow2)
{
	memset(q, 0, sizeof(*q));
	q->pkt = calloc(capacity_pow2, sizeof(*q->pkt));
	q->mask = capacity_pow2 - 1;
	return q->pkt ? 0 : -1;
}

static inline uint32_t afx_txq_count(const struct afx_txq *q)
{
	return q->tail - q->head;
}

static inline int afx_txq_full(const struct afx_txq *q)
{
	return afx_txq_count(q) > q->mask;
}

static inline void afx_txq_add(struct afx_txq *q, struct io_pkt *pkt)
{
	q->pkt[q->tail++ & q->mask] = pkt;
}

/* reads the completion ring and frees the completed packets; returns the count */
static inline uint32_t afx_umem_reap_completions(struct afx_umem *u, struct afx_txq *q)
{
	uint32_t idx = 0, n, i;
	n = xsk_ring_cons__peek(&u->comp, u->comp_size, &idx);
	for (i = 0; i < n; i++) {
		uint64_t addr = *xsk_ring_cons__comp_addr(&u->comp, idx + i);
		struct io_pkt *pkt;
		if (!afx_txq_count(q)) { /* more completions than we sent: count, ignore */
			q->comp_mismatch++;
			continue;
		}
		pkt = q->pkt[q->head++ & q->mask];
		if ((uint64_t) (pkt->data - u->area) != addr)
			q->comp_mismatch++;
		io_pkt_free(pkt);
	}
	if (n)
		xsk_ring_cons__release(&u->comp, n);
	return n;
}

/* frees what is still queued (at exit, after the socket is closed) */
static inline void afx_txq_drain(struct afx_txq *q)
{
	while (afx_txq_count(q))
		io_pkt_free(q->pkt[q->head++ & q->mask]);
}

#endif /* IO_AF_XDP_UMEM_H */
