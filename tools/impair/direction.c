/* The impairment model of one direction; see direction.h for the pipeline. */
#include "direction.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "packet_socket.h"

struct frame {
	uint64_t due_ns;
	uint64_t seq;           /* arrival order: ties in due time keep it */
	uint64_t hold_deadline; /* held back: send by then at the latest */
	uint32_t hold_left;     /* held back: frames still to send before it */
	uint32_t len;
	uint8_t was_held;       /* a frame is held back at most once */
	unsigned char data[];
};

static int frame_before(const struct frame *a, const struct frame *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void heap_push(struct direction *d, struct frame *f)
{
	uint32_t i = d->heap_len++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!frame_before(f, d->heap[parent]))
			break;
		d->heap[i] = d->heap[parent];
		i = parent;
	}
	d->heap[i] = f;
}

static struct frame *heap_pop(struct direction *d)
{
	struct frame *top = d->heap[0];
	struct frame *last = d->heap[--d->heap_len];
	uint32_t i = 0;
	for (;;) {
		uint32_t child = 2 * i + 1;
		if (child >= d->heap_len)
			break;
		if (child + 1 < d->heap_len && frame_before(d->heap[child + 1], d->heap[child]))
			child++;
		if (!frame_before(d->heap[child], last))
			break;
		d->heap[i] = d->heap[child];
		i = child;
	}
	if (d->heap_len > 0)
		d->heap[i] = last;
	return top;
}

static uint32_t queued(const struct direction *d)
{
	return d->heap_len + d->held_len;
}

int direction_init(struct direction *d, const struct impair_params *p, uint64_t seed, int out_fd)
{
	memset(d, 0, sizeof(*d));
	d->params = *p;
	d->rng.state = seed;
	d->out_fd = out_fd;
	/* the heap never holds more than the queue limit: allocate it once */
	d->heap_cap = p->queue_limit;
	d->heap = calloc(d->heap_cap, sizeof(*d->heap));
	return d->heap ? 0 : -1;
}

void direction_free(struct direction *d)
{
	direction_discard_all(d);
	free(d->heap);
	d->heap = NULL;
}

static uint64_t sample_delay(struct direction *d)
{
	const struct impair_params *p = &d->params;
	if (p->jitter_ns == 0)
		return p->delay_ns;
	double offset = (rng_unit(&d->rng) * 2.0 - 1.0) * (double)p->jitter_ns;
	double delay = (double)p->delay_ns + offset;
	return delay <= 0 ? 0 : (uint64_t)delay;
}

static void enqueue_copy(struct direction *d, const void *data, uint32_t len, uint64_t now_ns)
{
	const struct impair_params *p = &d->params;
	if (queued(d) >= p->queue_limit || d->heap_len >= d->heap_cap) {
		d->stats.queue_full++;
		return;
	}
	struct frame *f = malloc(sizeof(*f) + len);
	if (!f) {
		d->stats.queue_full++; /* out of memory behaves as a full queue */
		return;
	}
	memcpy(f->data, data, len);
	f->len = len;
	f->seq = d->next_seq++;
	f->hold_left = 0;
	f->hold_deadline = 0;
	f->was_held = 0;

	/* serialisation: the link sends one frame at a time at rate_bps */
	uint64_t sent_ns = now_ns;
	if (p->rate_bps) {
		uint64_t start = d->link_free_ns > now_ns ? d->link_free_ns : now_ns;
		if (start > now_ns)
			d->stats.rate_delayed++;
		sent_ns = start + (uint64_t)len * 8u * 1000000000ull / p->rate_bps;
		d->link_free_ns = sent_ns;
	}
	uint64_t delay = sample_delay(d);
	if (delay)
		d->stats.delayed++;
	f->due_ns = sent_ns + delay;
	heap_push(d, f);
	if (queued(d) > d->stats.peak_queue)
		d->stats.peak_queue = queued(d);
}

void direction_accept(struct direction *d, const void *data, uint32_t len, uint64_t now_ns)
{
	d->stats.received++;
	d->stats.received_bytes += len;
	if (rng_chance(&d->rng, d->params.loss)) {
		d->stats.lost++;
		return;
	}
	enqueue_copy(d, data, len, now_ns);
	if (rng_chance(&d->rng, d->params.duplicate)) {
		d->stats.duplicated++;
		enqueue_copy(d, data, len, now_ns);
	}
}

void direction_count_oversize(struct direction *d, uint64_t len)
{
	d->stats.received++;
	d->stats.received_bytes += len;
	d->stats.oversize++;
}

/* Returns 1 when the frame was consumed (sent or dropped), 0 to retry later. */
static int send_frame(struct direction *d, struct frame *f)
{
	switch (packet_socket_send(d->out_fd, f->data, f->len)) {
	case SEND_OK:
		d->stats.forwarded++;
		d->stats.forwarded_bytes += f->len;
		return 1;
	case SEND_FAILED:
		d->stats.send_errors++;
		return 1;
	case SEND_WOULD_BLOCK:
	default:
		return 0;
	}
}

static void held_remove(struct direction *d, uint32_t i)
{
	memmove(&d->held[i], &d->held[i + 1], (d->held_len - i - 1) * sizeof(d->held[0]));
	d->held_len--;
}

/* Sends the held-back frames whose turn has come, oldest hold first. */
static int release_held(struct direction *d, uint64_t now_ns)
{
	uint32_t i = 0;
	while (i < d->held_len) {
		struct frame *f = d->held[i];
		if (f->hold_left > 0 && f->hold_deadline > now_ns) {
			i++;
			continue;
		}
		if (!send_frame(d, f))
			return 1;
		held_remove(d, i);
		free(f);
	}
	return 0;
}

int direction_transmit_due(struct direction *d, uint64_t now_ns)
{
	for (;;) {
		if (release_held(d, now_ns))
			return 1;
		if (d->heap_len == 0 || d->heap[0]->due_ns > now_ns)
			return 0;
		struct frame *f = d->heap[0];
		if (!f->was_held && d->held_len < REORDER_HOLD_MAX &&
		    rng_chance(&d->rng, d->params.reorder)) {
			heap_pop(d);
			f->was_held = 1;
			f->hold_left = d->params.reorder_gap;
			f->hold_deadline = now_ns + REORDER_HOLD_TIMEOUT_NS;
			d->held[d->held_len++] = f;
			d->stats.reordered++;
			continue;
		}
		if (!send_frame(d, f))
			return 1;
		heap_pop(d);
		free(f);
		/* one more frame has overtaken every held-back one */
		for (uint32_t i = 0; i < d->held_len; i++)
			if (d->held[i]->hold_left > 0)
				d->held[i]->hold_left--;
	}
}

uint64_t direction_next_due(const struct direction *d)
{
	uint64_t next = d->heap_len ? d->heap[0]->due_ns : UINT64_MAX;
	for (uint32_t i = 0; i < d->held_len; i++) {
		uint64_t t = d->held[i]->hold_left ? d->held[i]->hold_deadline : 0;
		if (t < next)
			next = t;
	}
	return next;
}

void direction_discard_all(struct direction *d)
{
	while (d->heap_len) {
		free(heap_pop(d));
		d->stats.discarded_at_exit++;
	}
	while (d->held_len) {
		free(d->held[--d->held_len]);
		d->stats.discarded_at_exit++;
	}
}

uint64_t direction_dropped(const struct direction_stats *s)
{
	return s->lost + s->queue_full + s->send_errors + s->oversize + s->discarded_at_exit;
}

void direction_print(const struct direction *d, const char *from, const char *to, FILE *out)
{
	const struct direction_stats *s = &d->stats;
	fprintf(out,
		"%s->%s: received=%" PRIu64 " forwarded=%" PRIu64 " dropped=%" PRIu64
		" duplicated=%" PRIu64 " lost=%" PRIu64 " queue_full=%" PRIu64
		" send_errors=%" PRIu64 " oversize=%" PRIu64 " discarded_at_exit=%" PRIu64
		" reordered=%" PRIu64 " delayed=%" PRIu64 " rate_delayed=%" PRIu64
		" peak_queue=%" PRIu64 " received_bytes=%" PRIu64 " forwarded_bytes=%" PRIu64 "\n",
		from, to, s->received, s->forwarded, direction_dropped(s), s->duplicated,
		s->lost, s->queue_full, s->send_errors, s->oversize, s->discarded_at_exit,
		s->reordered, s->delayed, s->rate_delayed, s->peak_queue,
		s->received_bytes, s->forwarded_bytes);
}
