/*
 * io/af_xdp/steer.h — software receive steering between the backend's
 * threads.
 *
 * Why: each thread owns one NIC queue, and a connection must be served by
 * one thread. A NIC with RSS picks the queue from a hash we can compute and
 * helper_ip4_get_connection_affinity() answers from it. veth does not: a
 * frame arrives on the receive queue numbered like the transmit queue the
 * sending kernel picked, and Linux picks that from the socket's random
 * txhash (changed again on retransmission timeouts) — nothing we can
 * predict. So, with more than one thread, every thread computes for each
 * received frame the queue a Toeplitz-RSS NIC would have chosen
 * (io/common/rss.h, Microsoft key, round-robin table) and hands frames that
 * belong to another thread over to it; helper_ip4_get_connection_affinity()
 * answers from the same hash, so both always agree.
 *
 * How: one single-producer single-consumer ring per ordered pair of threads
 * (src -> dst). Frames are copied into the ring: the receiving thread's
 * UMEM frame goes straight back to its own free list (pools are not shared
 * between threads), and the destination copies the bytes into a frame of
 * its own UMEM. A full ring drops the frame (counted), as a NIC queue would.
 * A thread that sleeps in poll() is woken through its eventfd; the
 * sleeping flag and the ring indexes are sequentially consistent atomics,
 * so either the producer sees the flag or the sleeper sees the frame.
 */
#ifndef IO_AF_XDP_STEER_H
#define IO_AF_XDP_STEER_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

struct afx_steer_ring {
	_Atomic uint32_t head;          /* written by the producer */
	uint8_t pad0[60];
	_Atomic uint32_t tail;          /* written by the consumer */
	uint8_t pad1[60];
	uint32_t mask, slot_size;       /* slot: 2-byte length, then the frame */
	uint8_t *slots;
	uint64_t dropped_full;          /* producer side */
	uint64_t dropped_oversize;
};

static inline int afx_steer_ring_init(struct afx_steer_ring *r, uint32_t nslots_pow2, uint32_t max_frame)
{
	memset(r, 0, sizeof(*r));
	r->mask = nslots_pow2 - 1;
	r->slot_size = (max_frame + 2u + 7u) & ~7u;
	r->slots = malloc((size_t) nslots_pow2 * r->slot_size);
	return r->slots ? 0 : -1;
}

static inline void afx_steer_ring_destroy(struct afx_steer_ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

/* copies one frame in; 0, or -1 if full or too big (counted) */
static inline int afx_steer_push(struct afx_steer_ring *r, const uint8_t *frame, uint32_t len)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint8_t *slot;
	uint16_t l16;
	if (len + 2u > r->slot_size) {
		r->dropped_oversize++;
		return -1;
	}
	if (head - tail > r->mask) {
		r->dropped_full++;
		return -1;
	}
	slot = r->slots + (size_t) (head & r->mask) * r->slot_size;
	l16 = (uint16_t) len;
	memcpy(slot, &l16, 2);
	memcpy(slot + 2, frame, len);
	atomic_store(&r->head, head + 1); /* seq_cst: see the wake-up note above */
	return 0;
}

/* the oldest frame, or NULL; afx_steer_pop_done releases it */
static inline const uint8_t *afx_steer_peek(struct afx_steer_ring *r, uint32_t *len)
{
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	const uint8_t *slot;
	uint16_t l16;
	if (head == tail)
		return NULL;
	slot = r->slots + (size_t) (tail & r->mask) * r->slot_size;
	memcpy(&l16, slot, 2);
	*len = l16;
	return slot + 2;
}

static inline void afx_steer_pop_done(struct afx_steer_ring *r)
{
	atomic_store_explicit(&r->tail, atomic_load_explicit(&r->tail, memory_order_relaxed) + 1,
			      memory_order_release);
}

static inline int afx_steer_ring_empty(struct afx_steer_ring *r)
{
	return atomic_load(&r->head) == atomic_load(&r->tail);
}

/* per-thread wake-up: an eventfd plus "I am (about to be) asleep" */
struct afx_waker {
	int efd;
	_Atomic int sleeping;
};

static inline int afx_waker_init(struct afx_waker *w)
{
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	atomic_store(&w->sleeping, 0);
	return w->efd < 0 ? -1 : 0;
}

static inline void afx_waker_kick(struct afx_waker *w)
{
	uint64_t one = 1;
	if (atomic_load(&w->sleeping))
		(void) !write(w->efd, &one, sizeof(one));
}

static inline void afx_waker_clear(struct afx_waker *w)
{
	uint64_t v;
	(void) !read(w->efd, &v, sizeof(v));
}

#endif /* IO_AF_XDP_STEER_H */
