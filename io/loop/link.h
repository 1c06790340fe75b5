/*
 * io/loop/link.h — the emulated Ethernet segment of the loop backend.
 *
 * Every host has one egress queue (its cable to the segment). A frame sent
 * at time `now` starts serialising when the previous one of that host has
 * left (bandwidth: len * 8 / rate), then travels `delay`; it is due at the
 * receiver at depart + delay. Frames of one host arrive in order unless a
 * fault reorders them.
 *
 * Faults, each drawn from a seeded PRNG so that one seed gives one run:
 *  - loss: the frame is freed, never delivered;
 *  - corrupt: one random bit after the Ethernet header (IP and above) is
 *    flipped; the checksums were finished before, so the receiver (its
 *    emulated NIC or the stack) must detect it;
 *  - duplicate: a copy is delivered right after the original;
 *  - reorder: the frame is held back and delivered right after the next
 *    frame of the same host (or after `reorder_hold_ns` if none comes).
 * For every frame the PRNG is drawn the same number of times whatever the
 * outcome, so changing one probability does not reshuffle the other faults.
 *
 * No dependency on the stack: frames are io/common/pkt.h packets, owned by
 * the link between loop_link_send and delivery.
 */
#ifndef IO_LOOP_LINK_H
#define IO_LOOP_LINK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../common/pkt.h"

/* ---- PRNG: xorshift64*, seeded through splitmix64 (never a zero state) ---- */

struct loop_rng {
	uint64_t s;
};

static inline void loop_rng_seed(struct loop_rng *r, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	r->s = (z ^ (z >> 31)) | 1; /* non-zero */
}

static inline uint64_t loop_rng_next(struct loop_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* uniform in [0, 1) with 53 bits */
static inline double loop_rng_unit(struct loop_rng *r)
{
	return (double) (loop_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- link ----------------------------------------------------------------- */

struct loop_link_conf {
	double loss, duplicate, reorder, corrupt; /* probabilities, 0..1 */
	uint64_t delay_ns;                        /* propagation delay */
	uint64_t bandwidth_bps;                   /* 0: infinite */
	uint64_t reorder_hold_ns;                 /* longest a reordered frame waits */
};

struct loop_frame {
	struct io_pkt *pkt;
	uint64_t due_ns;
	uint16_t dst;
	struct loop_frame *next;
};

struct loop_queue {
	struct loop_frame *head, *tail;
	uint64_t busy_until_ns;   /* when the last queued frame has left */
	struct loop_frame *held;  /* a frame being reordered */
	uint64_t held_until_ns;
};

struct loop_link_counters {
	uint64_t sent;       /* frames handed to the link */
	uint64_t delivered;  /* frames handed to a receiver */
	uint64_t dropped;    /* lost */
	uint64_t duplicated; /* extra copies made */
	uint64_t reordered;  /* frames held back */
	uint64_t corrupted;  /* frames with a flipped bit */
	uint64_t freed_at_exit; /* still in flight when the link was destroyed */
};

/* called for every frame that enters the wire (after faults), e.g. for pcap */
typedef void (*loop_link_capture_fn)(void *ctx, const struct io_pkt *pkt, uint64_t t_ns);

struct loop_link {
	struct loop_link_conf conf;
	struct loop_rng rng;
	uint16_t nqueues;
	struct loop_queue *queues;
	struct loop_frame *free_frames;
	struct loop_link_counters c;
	loop_link_capture_fn capture;
	void *capture_ctx;
};

static inline int loop_link_init(struct loop_link *l, uint16_t nhosts, const struct loop_link_conf *conf, uint64_t seed)
{
	memset(l, 0, sizeof(*l));
	l->conf = *conf;
	loop_rng_seed(&l->rng, seed);
	l->nqueues = nhosts;
	l->queues = calloc(nhosts ? nhosts : 1, sizeof(struct loop_queue));
	return l->queues ? 0 : -1;
}

static inline struct loop_frame *loop_link_frame_get(struct loop_link *l)
{
	struct loop_frame *f = l->free_frames;
	if (f)
		l->free_frames = f->next;
	else
		f = malloc(sizeof(*f));
	return f;
}

static inline void loop_link_frame_put(struct loop_link *l, struct loop_frame *f)
{
	f->next = l->free_frames;
	l->free_frames = f;
}

/* appends at the tail of a queue, keeping due times non-decreasing */
static inline void loop_queue_append(struct loop_queue *q, struct loop_frame *f)
{
	if (q->tail && f->due_ns < q->tail->due_ns)
		f->due_ns = q->tail->due_ns;
	f->next = NULL;
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
}

/* flips bit number `bit` of the chain, counting from its first byte */
static inline void loop_flip_bit(struct io_pkt *pkt, uint64_t bit)
{
	uint64_t byte = bit / 8;
	for (; pkt; pkt = pkt->next) {
		if (byte < pkt->len) {
			pkt->data[byte] ^= (uint8_t) (1u << (bit % 8));
			return;
		}
		byte -= pkt->len;
	}
}

static inline void loop_link_enqueue(struct loop_link *l, struct loop_queue *q, struct io_pkt *pkt, uint16_t dst,
				     uint64_t due_ns, int hold, uint64_t now_ns)
{
	struct loop_frame *f = loop_link_frame_get(l);
	if (!f) { /* out of memory: behave as a loss */
		io_pkt_free(pkt);
		l->c.dropped++;
		return;
	}
	f->pkt = pkt;
	f->dst = dst;
	f->due_ns = due_ns;
	if (l->capture)
		l->capture(l->capture_ctx, pkt, now_ns);
	if (hold && !q->held) {
		q->held = f;
		q->held_until_ns = due_ns + l->conf.reorder_hold_ns;
		l->c.reordered++;
		return;
	}
	loop_queue_append(q, f);
	if (q->held && q->held != f) { /* the frame held back goes right after this one */
		struct loop_frame *h = q->held;
		q->held = NULL;
		loop_queue_append(q, h);
	}
}

/*
 * Sends pkt (a frame the link now owns) from host src to host dst at now_ns.
 * The frame must be private to the link (no buffer shared with a sender's
 * retransmission copy), since corruption writes into it.
 */
static inline void loop_link_send(struct loop_link *l, uint16_t src, uint16_t dst, struct io_pkt *pkt, uint64_t now_ns)
{
	struct loop_queue *q = &l->queues[src];
	uint32_t len = io_pkt_total_len(pkt);
	/* fixed number of draws per frame: see the header comment */
	double r_loss = loop_rng_unit(&l->rng), r_corrupt = loop_rng_unit(&l->rng);
	double r_dup = loop_rng_unit(&l->rng), r_reorder = loop_rng_unit(&l->rng);
	uint64_t r_bit = loop_rng_next(&l->rng);
	uint64_t depart, ser = 0;
	struct io_pkt *copy = NULL;

	l->c.sent++;
	if (r_loss < l->conf.loss) {
		io_pkt_free(pkt);
		l->c.dropped++;
		return;
	}
	if (r_corrupt < l->conf.corrupt && len > 14) {
		loop_flip_bit(pkt, 14 * 8 + r_bit % ((uint64_t) (len - 14) * 8));
		l->c.corrupted++;
	}
	if (r_dup < l->conf.duplicate) {
		copy = io_pkt_copy_chain(pkt->pool, pkt);
		if (copy)
			l->c.duplicated++;
	}
	if (l->conf.bandwidth_bps)
		ser = ((uint64_t) len * 8u * 1000000000u) / l->conf.bandwidth_bps;
	depart = (q->busy_until_ns > now_ns ? q->busy_until_ns : now_ns) + ser;
	q->busy_until_ns = depart;
	loop_link_enqueue(l, q, pkt, dst, depart + l->conf.delay_ns, r_reorder < l->conf.reorder, now_ns);
	if (copy) {
		depart += ser;
		q->busy_until_ns = depart;
		loop_link_enqueue(l, q, copy, dst, depart + l->conf.delay_ns, 0, now_ns);
	}
}

/* earliest time something will be due (UINT64_MAX: the link is empty) */
static inline uint64_t loop_link_next_due(const struct loop_link *l)
{
	uint64_t t = UINT64_MAX;
	uint16_t i;
	for (i = 0; i < l->nqueues; i++) {
		const struct loop_queue *q = &l->queues[i];
		if (q->head && q->head->due_ns < t)
			t = q->head->due_ns;
		if (q->held && q->held_until_ns < t)
			t = q->held_until_ns;
	}
	return t;
}

/* hands every frame due at now_ns to deliver(ctx, dst, pkt), which owns it
 * from then on; returns the number delivered */
static inline uint32_t loop_link_poll(struct loop_link *l, uint64_t now_ns,
				      void (*deliver)(void *ctx, uint16_t dst, struct io_pkt *pkt), void *ctx)
{
	uint32_t n = 0;
	uint16_t i;
	for (i = 0; i < l->nqueues; i++) {
		struct loop_queue *q = &l->queues[i];
		if (q->held && q->held_until_ns <= now_ns) { /* nothing came after it */
			struct loop_frame *h = q->held;
			q->held = NULL;
			loop_queue_append(q, h);
		}
		while (q->head && q->head->due_ns <= now_ns) {
			struct loop_frame *f = q->head;
			q->head = f->next;
			if (!q->head)
				q->tail = NULL;
			l->c.delivered++;
			n++;
			deliver(ctx, f->dst, f->pkt);
			loop_link_frame_put(l, f);
		}
	}
	return n;
}

/* frees every frame still in flight and the link itself */
static inline void loop_link_destroy(struct loop_link *l)
{
	uint16_t i;
	for (i = 0; i < l->nqueues; i++) {
		struct loop_queue *q = &l->queues[i];
		if (q->held) {
			loop_queue_append(q, q->held);
			q->held = NULL;
		}
		while (q->head) {
			struct loop_frame *f = q->head;
			q->head = f->next;
			io_pkt_free(f->pkt);
			l->c.freed_at_exit++;
			free(f);
		}
		q->tail = NULL;
	}
	while (l->free_frames) {
		struct loop_frame *f = l->free_frames;
		l->free_frames = f->next;
		free(f);
	}
	free(l->queues);
	l->queues = NULL;
}

#endif /* IO_LOOP_LINK_H */
