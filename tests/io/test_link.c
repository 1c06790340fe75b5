/* tests/io/test_link.c — the emulated segment of io/loop/link.h: PRNG
 * determinism (same seed, same run), each fault's exact effect, the
 * bandwidth/delay queue, and that every frame is freed. */
#include "../../io/loop/link.h"
#include "check.h"

#define NFRAMES 4000

struct record {
	uint32_t n;
	uint32_t id[3 * NFRAMES];
	uint16_t dst[3 * NFRAMES];
	uint64_t hash; /* of all delivered bytes, order-sensitive */
};

static uint64_t now_ns;

static void deliver(void *ctx, uint16_t dst, struct io_pkt *pkt)
{
	struct record *r = ctx;
	const struct io_pkt *s;
	uint32_t id = 0;
	io_pkt_copy_out(pkt, 20, &id, sizeof(id));
	r->id[r->n] = id;
	r->dst[r->n] = dst;
	r->n++;
	for (s = pkt; s; s = s->next) {
		uint16_t i;
		for (i = 0; i < s->len; i++)
			r->hash = (r->hash ^ s->data[i]) * 0x100000001b3ull;
	}
	io_pkt_free(pkt);
}

static struct io_pkt *frame(struct io_pkt_pool *p, uint32_t id, uint16_t len)
{
	struct io_pkt *f = io_pkt_alloc(p);
	uint16_t i;
	for (i = 0; i < len; i++)
		f->data[i] = (uint8_t) (i ^ id);
	memcpy(f->data + 20, &id, sizeof(id));
	f->len = len;
	return f;
}

/* sends NFRAMES frames host 0 -> 1 (and every 3rd 1 -> 0), 10 us apart */
static void run(struct io_pkt_pool *p, const struct loop_link_conf *conf, uint64_t seed, struct record *r,
		struct loop_link_counters *c)
{
	struct loop_link l;
	uint32_t i;
	memset(r, 0, sizeof(*r));
	loop_link_init(&l, 2, conf, seed);
	for (i = 0, now_ns = 1000000000ull; i < NFRAMES; i++, now_ns += 10000) {
		loop_link_poll(&l, now_ns, deliver, r);
		loop_link_send(&l, i % 3 == 2, i % 3 != 2, frame(p, i, (uint16_t) (60 + i % 1400)), now_ns);
	}
	while (loop_link_next_due(&l) != UINT64_MAX) {
		now_ns = loop_link_next_due(&l);
		loop_link_poll(&l, now_ns, deliver, r);
	}
	*c = l.c;
	loop_link_destroy(&l);
}

int main(void)
{
	static struct record a, b, d;
	struct loop_link_counters ca, cb, cd;
	struct loop_link_conf conf;
	struct io_pkt_pool p;
	struct loop_rng r1, r2;
	uint32_t i, ok, inorder;

	loop_rng_seed(&r1, 42);
	loop_rng_seed(&r2, 42);
	for (i = 0, ok = 1; i < 1000; i++)
		ok &= loop_rng_next(&r1) == loop_rng_next(&r2);
	CHECK("PRNG: same seed, same sequence", ok, "diverged");
	loop_rng_seed(&r2, 43);
	CHECK("PRNG: other seed, other sequence", loop_rng_next(&r1) != loop_rng_next(&r2), "same");
	loop_rng_seed(&r1, 0);
	CHECK("PRNG: seed 0 usable", r1.s != 0 && loop_rng_next(&r1) != 0, "zero state");

	CHECK("pool init", io_pkt_pool_init(&p, 16384, 8192, 2048, 0, 0) == 0, "failed");
	memset(&conf, 0, sizeof(conf));
	conf.loss = 0.05;
	conf.duplicate = 0.05;
	conf.reorder = 0.05;
	conf.corrupt = 0.05;
	conf.delay_ns = 50000;
	conf.bandwidth_bps = 1000000000ull;
	conf.reorder_hold_ns = 1000000;
	run(&p, &conf, 7, &a, &ca);
	run(&p, &conf, 7, &b, &cb);
	run(&p, &conf, 8, &d, &cd);
	CHECK("link: same seed, same deliveries (order, bytes, counters)",
	      a.n == b.n && a.hash == b.hash && !memcmp(a.id, b.id, a.n * sizeof(a.id[0])) &&
	      !memcmp(&ca, &cb, sizeof(ca)), "n %u/%u", a.n, b.n);
	CHECK("link: other seed, other run", a.hash != d.hash, "identical");
	/* deterministic given the seed: these bounds are not timing-dependent */
	CHECK("link: loss near 5% (150..250 of 4000)", ca.dropped >= 150 && ca.dropped <= 250, "%llu",
	      (unsigned long long) ca.dropped);
	CHECK("link: duplicates, reorders, corruptions all happened", ca.duplicated > 100 && ca.reordered > 100 &&
	      ca.corrupted > 100, "dup %llu reo %llu cor %llu", (unsigned long long) ca.duplicated,
	      (unsigned long long) ca.reordered, (unsigned long long) ca.corrupted);
	CHECK("link: delivered = sent - dropped + duplicated", ca.delivered == ca.sent - ca.dropped + ca.duplicated &&
	      a.n == ca.delivered, "delivered %llu", (unsigned long long) ca.delivered);
	CHECK("link: every frame freed", io_pkt_pool_descs_in_use(&p) == 0 && io_pkt_pool_bufs_in_use(&p) == 0, "%u",
	      io_pkt_pool_descs_in_use(&p));

	/* no fault: order kept, nothing lost, bytes intact */
	memset(&conf, 0, sizeof(conf));
	run(&p, &conf, 7, &a, &ca);
	for (i = 0, ok = a.n == NFRAMES, inorder = 1; ok && i < a.n; i++) {
		if (a.dst[i] == 1 && i && a.dst[i - 1] == 1 && a.id[i] < a.id[i - 1])
			inorder = 0;
	}
	CHECK("link without faults: all frames, in order per host", ok && inorder && ca.dropped == 0, "n %u", a.n);

	/* reorder only (p = 1 for host 0 frames would hold each one): use 0.5 and
	 * check that every out-of-order frame is exactly one late */
	conf.reorder = 0.5;
	conf.reorder_hold_ns = 100000000; /* long: release only by the next frame */
	run(&p, &conf, 3, &a, &ca);
	{
		uint32_t last = 0, late = 0, bad = 0, first = 1;
		for (i = 0; i < a.n; i++) {
			if (a.dst[i] != 1)
				continue;
			if (!first && a.id[i] < last) {
				late++;
				if (last - a.id[i] > 2) /* next host-0 frame is id+1 or id+2 */
					bad++;
			} else {
				last = a.id[i];
			}
			first = 0;
		}
		CHECK("reorder: held frames arrive right after the next frame", late > 100 && bad == 0 && a.n == NFRAMES,
		      "late %u bad %u n %u", late, bad, a.n);
	}

	/* corruption: exactly one bit differs, never in the Ethernet header */
	{
		struct loop_link l;
		struct record r;
		struct io_pkt *f, *orig;
		uint32_t k, diffbits, where_ok = 1, one_bit = 1;
		memset(&conf, 0, sizeof(conf));
		conf.corrupt = 1.0;
		loop_link_init(&l, 2, &conf, 99);
		for (k = 0; k < 200; k++) {
			struct loop_queue *q = &l.queues[0];
			uint32_t j;
			f = frame(&p, k, 100);
			orig = io_pkt_linearize(&p, f);
			loop_link_send(&l, 0, 1, f, 0);
			for (j = 0, diffbits = 0; j < 100; j++) {
				uint8_t x = q->tail->pkt->data[j] ^ orig->data[j];
				diffbits += (uint32_t) __builtin_popcount(x);
				if (x && j < 14)
					where_ok = 0;
			}
			if (diffbits != 1)
				one_bit = 0;
			io_pkt_free(orig);
		}
		memset(&r, 0, sizeof(r));
		loop_link_poll(&l, 0, deliver, &r);
		CHECK("corrupt: exactly one bit flipped, after the Ethernet header", one_bit && where_ok && r.n == 200,
		      "one %u where %u n %u", one_bit, where_ok, r.n);
		loop_link_destroy(&l);
	}

	/* bandwidth + delay: 1250-byte frames at 100 Mb/s = 100 us each, +1 ms */
	{
		struct loop_link l;
		uint64_t t0;
		memset(&conf, 0, sizeof(conf));
		conf.bandwidth_bps = 100000000;
		conf.delay_ns = 1000000;
		loop_link_init(&l, 2, &conf, 1);
		loop_link_send(&l, 0, 1, frame(&p, 0, 1250), 0);
		loop_link_send(&l, 0, 1, frame(&p, 1, 1250), 0);
		loop_link_send(&l, 1, 0, frame(&p, 2, 1250), 0);
		t0 = loop_link_next_due(&l);
		CHECK("bandwidth+delay: first due at 100 us + 1 ms", t0 == 1100000, "%llu", (unsigned long long) t0);
		CHECK("queue per host: second frame of host 0 due at 1.2 ms",
		      l.queues[0].tail->due_ns == 1200000 && l.queues[1].head->due_ns == 1100000, "%llu",
		      (unsigned long long) l.queues[0].tail->due_ns);
		/* destroy with frames in flight frees them */
		loop_link_destroy(&l);
		CHECK("destroy frees frames in flight", l.c.freed_at_exit == 3 && io_pkt_pool_descs_in_use(&p) == 0,
		      "freed %llu", (unsigned long long) l.c.freed_at_exit);
	}
	io_pkt_pool_destroy(&p);
	return check_failures ? 1 : 0;
}
