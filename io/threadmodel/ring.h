/*
 * io/threadmodel/ring.h — a lock-free single-producer / single-consumer
 * ring of fixed-size slots, the only channel between a networking thread
 * and its application thread.
 *
 * Indices run freely (uint32_t, wrapping) and are masked on use; capacity
 * is a power of two.  The producer writes slots at `prod` privately and
 * makes them visible in batches with one release store of `head`
 * (tm_ring_publish), so a burst of events costs one shared-cache-line
 * write, not one per event.  The consumer reads up to `head` (acquire) and
 * hands each slot back with a release store of `tail` right after copying
 * it out, so a producer waiting for room sees it at once.  Each side
 * caches the other's index and re-reads it only when its cached view says
 * full / empty: in the common case neither side touches the other's line.
 *
 * The ring knows nothing about what a slot holds: callers index their own
 * slot array with tm_ring_slot().
 */
#ifndef IO_THREADMODEL_RING_H
#define IO_THREADMODEL_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define TM_CACHE_LINE 64

struct tm_ring {
	/* shared: written by one side, read by the other */
	_Alignas(TM_CACHE_LINE) _Atomic uint32_t head; /* published by the producer */
	_Alignas(TM_CACHE_LINE) _Atomic uint32_t tail; /* released by the consumer */
	/* producer's private state */
	_Alignas(TM_CACHE_LINE) uint32_t prod;         /* next slot to write */
	uint32_t published;                            /* last value stored to head */
	uint32_t tail_seen;                            /* cached tail */
	/* consumer's private state */
	_Alignas(TM_CACHE_LINE) uint32_t cons;         /* next slot to read */
	uint32_t head_seen;                            /* cached head */
	uint32_t mask;                                 /* capacity - 1 (read-only after init) */
};

static inline void tm_ring_init(struct tm_ring *r, uint32_t capacity)
{
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->prod = r->published = r->tail_seen = 0;
	r->cons = r->head_seen = 0;
	r->mask = capacity - 1;
}

/* producer: index of a free slot, or -1 when the ring is full */
static inline int64_t tm_ring_reserve(struct tm_ring *r)
{
	if (r->prod - r->tail_seen > r->mask) {
		r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (r->prod - r->tail_seen > r->mask)
			return -1;
	}
	return (int64_t) (r->prod & r->mask);
}

/* producer: the reserved slot is written (not yet visible) */
static inline void tm_ring_commit(struct tm_ring *r)
{
	r->prod++;
}

/* producer: slots committed but not yet visible to the consumer */
static inline uint32_t tm_ring_unpublished(const struct tm_ring *r)
{
	return r->prod - r->published;
}

/* producer: makes every committed slot visible; non-zero if there were any */
static inline int tm_ring_publish(struct tm_ring *r)
{
	if (r->prod == r->published)
		return 0;
	r->published = r->prod;
	atomic_store_explicit(&r->head, r->prod, memory_order_release);
	return 1;
}

/* consumer: index of the next slot to read, or -1 when nothing is visible */
static inline int64_t tm_ring_peek(struct tm_ring *r)
{
	if (r->cons == r->head_seen) {
		r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
		if (r->cons == r->head_seen)
			return -1;
	}
	return (int64_t) (r->cons & r->mask);
}

/* consumer: done with the slot returned by tm_ring_peek; the producer may reuse it */
static inline void tm_ring_release(struct tm_ring *r)
{
	r->cons++;
	atomic_store_explicit(&r->tail, r->cons, memory_order_release);
}

/* consumer, before sleeping (sequentially consistent, see bell.h): has the producer published more? */
static inline int tm_ring_has_visible(struct tm_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_seq_cst) != r->cons;
}

#endif
