/* One direction of the bridge (frames from one interface to the other) and
 * the impairments applied to it, in this order, modelled on a link:
 *
 *   arrival -> loss -> duplication -> queue limit (drop tail)
 *           -> serialisation at the rate (link busy time)
 *           -> propagation delay +- jitter -> reordering (hold-back) -> send
 *
 * Frames are kept in a min-heap by due time (then arrival order), so with no
 * jitter the order is preserved and with jitter frames may overtake each
 * other, as on netem. */
#ifndef IMPAIR_DIRECTION_H
#define IMPAIR_DIRECTION_H

#include <stdint.h>
#include <stdio.h>

#include "rng.h"

struct impair_params {
	double loss;          /* probability a frame is dropped */
	double duplicate;     /* probability a frame is sent twice */
	double reorder;       /* probability a due frame is held back */
	uint32_t reorder_gap; /* frames sent before a held-back one goes */
	uint64_t delay_ns;
	uint64_t jitter_ns;   /* delay is uniform in [delay-jitter, delay+jitter] */
	uint64_t rate_bps;    /* 0 = unlimited */
	uint32_t queue_limit; /* frames held by this direction at most */
};

struct direction_stats {
	uint64_t received, received_bytes;
	uint64_t forwarded, forwarded_bytes;
	uint64_t lost;              /* dropped by -l */
	uint64_t queue_full;        /* dropped by -q (drop tail) */
	uint64_t send_errors;       /* dropped: the kernel refused the frame */
	uint64_t oversize;          /* dropped: larger than the receive buffer */
	uint64_t discarded_at_exit; /* still queued when the bridge stopped */
	uint64_t duplicated;        /* extra copies made by -u */
	uint64_t reordered;         /* frames held back by -r */
	uint64_t rate_delayed;      /* frames that waited for the link (-b) */
	uint64_t delayed;           /* frames given a non-zero delay (-d/-j) */
	uint64_t peak_queue;
};

struct frame;

/* held-back frames (reordering) waiting for later frames to overtake them */
#define REORDER_HOLD_MAX 64
/* a held-back frame goes anyway after this long, so that the last frames of
 * a burst are not held forever */
#define REORDER_HOLD_TIMEOUT_NS (10ull * 1000 * 1000)

struct direction {
	struct impair_params params;
	struct direction_stats stats;
	struct rng rng;
	int out_fd;
	uint64_t next_seq;
	uint64_t link_free_ns; /* when the (rate-limited) link finishes sending */
	struct frame **heap;
	uint32_t heap_len, heap_cap;
	struct frame *held[REORDER_HOLD_MAX];
	uint32_t held_len;
};

int direction_init(struct direction *d, const struct impair_params *p, uint64_t seed, int out_fd);
void direction_free(struct direction *d);

/* A frame arrived at NOW_NS: apply loss, duplication, queue limit, rate and
 * delay, and queue it (a copy is made). */
void direction_accept(struct direction *d, const void *data, uint32_t len, uint64_t now_ns);

/* A frame could not be read whole (bigger than the buffer): count the drop. */
void direction_count_oversize(struct direction *d, uint64_t len);

/* Sends every frame due at NOW_NS. Returns 1 when the socket would block
 * (call again once it is writable), else 0. */
int direction_transmit_due(struct direction *d, uint64_t now_ns);

/* When the next queued frame becomes due; UINT64_MAX if none. */
uint64_t direction_next_due(const struct direction *d);

/* Drops every queued frame, counting it as discarded_at_exit. */
void direction_discard_all(struct direction *d);

uint64_t direction_dropped(const struct direction_stats *s);

void direction_print(const struct direction *d, const char *from, const char *to, FILE *out);

#endif
