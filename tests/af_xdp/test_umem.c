/*
 * tests/af_xdp/test_umem.c — the AF_XDP backend's frame accounting
 * (io/af_xdp/umem.h) and its steering rings (io/af_xdp/steer.h), without a
 * kernel socket: the fill and completion rings are plain memory laid out as
 * libxdp's rings, and the test plays the kernel's part (consuming fill
 * entries, producing RX descriptors and completions).
 *
 * Prints one line per check and "N passed, N failed"; exit status 1 if a
 * check failed. Needs no privileges.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../io/af_xdp/umem.h"
#include "../../io/af_xdp/steer.h"

static int passed, failed;

static void check(int cond, const char *what)
{
	printf("%s: %s\n", cond ? "pass" : "FAIL", what);
	if (cond)
		passed++;
	else
		failed++;
}

#define NFRAMES 64u
#define FRAME 2048u
#define RING 16u

/* ring memory as the kernel maps it: producer, consumer, flags, entries */
struct fake_ring {
	uint32_t producer, consumer, flags;
	uint64_t addrs[RING];
};

static void fake_prod(struct xsk_ring_prod *r, struct fake_ring *f)
{
	memset(r, 0, sizeof(*r));
	memset(f, 0, sizeof(*f));
	r->mask = RING - 1;
	r->size = RING;
	r->producer = &f->producer;
	r->consumer = &f->consumer;
	r->flags = &f->flags;
	r->ring = f->addrs;
	r->cached_cons = RING; /* as libxdp sets it up: consumer + size */
}

static void fake_cons(struct xsk_ring_cons *r, struct fake_ring *f)
{
	memset(r, 0, sizeof(*r));
	memset(f, 0, sizeof(*f));
	r->mask = RING - 1;
	r->size = RING;
	r->producer = &f->producer;
	r->consumer = &f->consumer;
	r->flags = &f->flags;
	r->ring = f->addrs;
}

static uint32_t nfree(struct io_pkt_pool *p)
{
	return p->cls[IO_PKT_CLASS_NORMAL].nfree;
}

static int frame_is_free(struct io_pkt_pool *p, uint32_t frame)
{
	uint32_t i;
	for (i = 0; i < p->cls[IO_PKT_CLASS_NORMAL].nfree; i++)
		if (p->cls[IO_PKT_CLASS_NORMAL].free_stack[i] == frame)
			return 1;
	return 0;
}

static void test_frames(void)
{
	static uint8_t area[NFRAMES * FRAME] __attribute__((aligned(4096)));
	struct afx_umem u;
	struct io_pkt_pool pool;
	struct fake_ring fill_mem, comp_mem;
	struct afx_txq txq;
	struct io_pkt *a, *b, *c, *clone, *bad, *tx[3];
	uint32_t i, n, frame_a, before;
	int distinct = 1;

	memset(&u, 0, sizeof(u));
	u.area = area;
	u.nframes = NFRAMES;
	u.frame_size = FRAME;
	u.fill_size = RING;
	u.comp_size = RING;
	u.keep_free = 8;
	fake_prod(&u.fill, &fill_mem);
	fake_cons(&u.comp, &comp_mem);
	check(afx_pool_init(&pool, &u, 128) == 0, "pool over the UMEM: created");
	check(nfree(&pool) == NFRAMES && pool.ndesc_free == 128, "pool: every frame and descriptor free");

	/* the fill ring takes frames from the free list */
	n = afx_umem_refill(&u, &pool);
	check(n == RING && u.in_kernel == RING && nfree(&pool) == NFRAMES - RING && fill_mem.producer == RING,
	      "refill: 16 frames to the fill ring, off the free list");
	for (i = 0; i < RING; i++)
		if (fill_mem.addrs[i] % FRAME || frame_is_free(&pool, (uint32_t) (fill_mem.addrs[i] / FRAME)))
			distinct = 0;
	check(distinct, "refill: fill addresses are frame starts no longer on the free list");
	check(afx_umem_refill(&u, &pool) == 0, "refill: a full ring takes nothing more");

	/* the kernel took all 16 and writes 3 frames: RX descriptors */
	fill_mem.consumer = RING;
	a = afx_umem_rx_packet(&u, &pool, fill_mem.addrs[0] + 258, 60);
	b = afx_umem_rx_packet(&u, &pool, fill_mem.addrs[1] + 258, 1514);
	c = afx_umem_rx_packet(&u, &pool, fill_mem.addrs[2] + 258, 100);
	check(a && b && c && u.in_kernel == RING - 3, "rx: three descriptors become packets");
	frame_a = (uint32_t) (fill_mem.addrs[0] / FRAME);
	check(a && a->data == area + fill_mem.addrs[0] + 258 && a->len == 60 && a->buf_idx == frame_a &&
	      pool.cls[0].refcnt[frame_a] == 1, "rx: packet data at the descriptor address, reference count 1");
	check(a && ((uintptr_t) (a->data + 14) % 4) == 0, "rx: at offset 258 the IPv4 header is 4-byte aligned");

	/* clone: a new descriptor on the same frame */
	clone = io_pkt_clone(&pool, a);
	check(clone && clone != a && clone->data == a->data && pool.cls[0].refcnt[frame_a] == 2,
	      "clone: new descriptor, same frame, reference count 2");
	before = nfree(&pool);
	io_pkt_free(a);
	check(!frame_is_free(&pool, frame_a) && nfree(&pool) == before, "free of the original: frame still held by the clone");
	io_pkt_free(clone);
	check(frame_is_free(&pool, frame_a) && nfree(&pool) == before + 1, "free of the clone: frame back on the free list");

	/* bad descriptors are refused and counted */
	bad = afx_umem_rx_packet(&u, &pool, (uint64_t) NFRAMES * FRAME + 258, 60);
	check(!bad && u.rx_bad_desc == 1, "rx: descriptor beyond the UMEM refused and counted");
	bad = afx_umem_rx_packet(&u, &pool, fill_mem.addrs[3] + 258, FRAME);
	check(!bad && u.rx_bad_desc == 2, "rx: descriptor running past its frame refused and counted");

	/* out of packet descriptors: the frame goes back, counted */
	{
		struct io_pkt *hold[128], *first = io_pkt_alloc(&pool);
		uint32_t k = 0, frame = (uint32_t) (fill_mem.addrs[4] / FRAME);
		while (k < 128 && (hold[k] = io_pkt_clone(&pool, first)) != NULL) /* uses descriptors only */
			k++;
		before = nfree(&pool);
		bad = afx_umem_rx_packet(&u, &pool, fill_mem.addrs[4] + 258, 60);
		check(!bad && u.rx_no_desc == 1 && nfree(&pool) == before + 1 && frame_is_free(&pool, frame),
		      "rx without a free descriptor: frame dropped back to the free list, counted");
		while (k)
			io_pkt_free(hold[--k]);
		io_pkt_free(first);
	}
	io_pkt_free(b);
	io_pkt_free(c);

	/* transmit: packets wait in the FIFO until their completion */
	check(afx_txq_init(&txq, 4) == 0, "tx fifo: created");
	before = nfree(&pool);
	for (i = 0; i < 3; i++) {
		tx[i] = io_pkt_alloc(&pool);
		tx[i]->len = 60;
		afx_txq_add(&txq, tx[i]);
	}
	check(nfree(&pool) == before - 3 && afx_txq_count(&txq) == 3, "tx: three frames in flight");
	for (i = 0; i < 2; i++) /* the kernel completes the first two */
		comp_mem.addrs[i] = (uint64_t) (tx[i]->data - area);
	comp_mem.producer = 2;
	n = afx_umem_reap_completions(&u, &txq);
	check(n == 2 && afx_txq_count(&txq) == 1 && nfree(&pool) == before - 1 && txq.comp_mismatch == 0 &&
	      comp_mem.consumer == 2, "completions: two packets freed in order, no mismatch");
	comp_mem.addrs[2] = 12345; /* a completion for an address we did not send next */
	comp_mem.producer = 3;
	n = afx_umem_reap_completions(&u, &txq);
	check(n == 1 && txq.comp_mismatch == 1 && afx_txq_count(&txq) == 0 && nfree(&pool) == before,
	      "completions: an unexpected address is counted, the oldest packet still freed");
	comp_mem.producer = 4;
	n = afx_umem_reap_completions(&u, &txq);
	check(n == 1 && txq.comp_mismatch == 2, "completions: more than were sent are counted and ignored");

	/* the fill ring never takes the frames kept for the stack */
	{
		struct io_pkt *hold[NFRAMES];
		uint32_t k = 0;
		fill_mem.consumer = fill_mem.producer; /* the kernel took everything */
		u.in_kernel = 0;
		while (nfree(&pool) > u.keep_free + 2 && k < NFRAMES)
			hold[k++] = io_pkt_alloc(&pool);
		n = afx_umem_refill(&u, &pool);
		check(n == 2 && nfree(&pool) == u.keep_free, "refill: stops at the frames kept free for the stack");
		while (k)
			io_pkt_free(hold[--k]);
	}
	free(txq.pkt);
	afx_pool_destroy(&pool);
}

/* ---- steering ring: one producer thread, one consumer thread -------------- */

#define STEER_FRAMES 200000u

static struct afx_steer_ring ring;

static uint32_t steer_len(uint32_t seq)
{
	return 14u + (seq * 7919u) % 1500u;
}

static void *producer(void *arg)
{
	uint8_t frame[1600];
	uint32_t seq, k;
	(void) arg;
	for (seq = 0; seq < STEER_FRAMES; seq++) {
		uint32_t len = steer_len(seq);
		for (k = 0; k < len; k++)
			frame[k] = (uint8_t) (seq + k * 13u);
		while (afx_steer_push(&ring, frame, len) != 0)
			; /* full: wait for the consumer */
	}
	return NULL;
}

static void test_steer(void)
{
	pthread_t th;
	uint32_t seq = 0, bad = 0, len, k;
	const uint8_t *f;
	uint8_t big[2000];
	check(afx_steer_ring_init(&ring, 64, 1514) == 0, "steering ring: created");
	memset(big, 0, sizeof(big));
	check(afx_steer_push(&ring, big, 1600) == -1 && ring.dropped_oversize == 1,
	      "steering ring: a frame above the MTU is refused and counted");
	for (k = 0; k < 64; k++)
		afx_steer_push(&ring, big, 60);
	check(afx_steer_push(&ring, big, 60) == -1 && ring.dropped_full == 1,
	      "steering ring: the 65th frame into 64 slots is refused and counted");
	for (k = 0; k < 64; k++)
		if (afx_steer_peek(&ring, &len))
			afx_steer_pop_done(&ring);
	check(afx_steer_ring_empty(&ring), "steering ring: drained");
	pthread_create(&th, NULL, producer, NULL);
	while (seq < STEER_FRAMES) {
		f = afx_steer_peek(&ring, &len);
		if (!f)
			continue;
		if (len != steer_len(seq))
			bad++;
		else
			for (k = 0; k < len; k++)
				if (f[k] != (uint8_t) (seq + k * 13u)) {
					bad++;
					break;
				}
		afx_steer_pop_done(&ring);
		seq++;
	}
	pthread_join(th, NULL);
	check(bad == 0 && afx_steer_ring_empty(&ring), "steering ring: 200000 frames across threads, in order, intact");
	afx_steer_ring_destroy(&ring);
}

int main(void)
{
	test_frames();
	test_steer();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
