/*
 * Latency histogram with log-linear buckets: values below 256 ns get one
 * bucket per nanosecond; above, every power of two is split into 128 equal
 * buckets.  A bucket's width is at most 1/128 of its lower bound, and a
 * percentile is reported as the bucket's midpoint, so the error is below
 * 0.4% of the value, for any value up to 2^64 ns, in a fixed 58 KiB.
 * Recording is a few instructions and never allocates, so every request's
 * latency can be recorded; per-thread histograms are merged at the end.
 */
#ifndef LINUX_BASELINE_LATENCY_HIST_H
#define LINUX_BASELINE_LATENCY_HIST_H

#include <stdint.h>
#include <string.h>

#define BL_HIST_SUB_BITS (7)
#define BL_HIST_SUB (1u << BL_HIST_SUB_BITS)                    /* buckets per power of two */
#define BL_HIST_BUCKETS ((64 - BL_HIST_SUB_BITS + 1) * BL_HIST_SUB) /* 7424 */

struct bl_hist {
	uint64_t count;
	uint64_t bucket[BL_HIST_BUCKETS];
};

static inline unsigned bl_hist_index(uint64_t ns)
{
	unsigned msb, shift;
	if (ns < 2 * BL_HIST_SUB)
		return (unsigned) ns;
	msb = 63u - (unsigned) __builtin_clzll(ns);
	shift = msb - BL_HIST_SUB_BITS; /* keep the top 8 bits: 1 + 7 sub-bucket bits */
	return (shift + 1) * BL_HIST_SUB + (unsigned) (ns >> shift) - BL_HIST_SUB;
}

/* Lowest value in bucket idx, and the bucket's width. */
static inline uint64_t bl_hist_bucket_low(unsigned idx, uint64_t *width)
{
	unsigned shift;
	if (idx < 2 * BL_HIST_SUB) {
		*width = 1;
		return idx;
	}
	shift = idx / BL_HIST_SUB - 1;
	*width = 1ull << shift;
	return (uint64_t) (idx % BL_HIST_SUB + BL_HIST_SUB) << shift;
}

static inline void bl_hist_record(struct bl_hist *h, uint64_t ns)
{
	h->bucket[bl_hist_index(ns)]++;
	h->count++;
}

static inline void bl_hist_merge(struct bl_hist *into, const struct bl_hist *from)
{
	for (unsigned i = 0; i < BL_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
}

/* The p-th percentile (0 < p <= 100) in ns: the value of the sample of rank
 * ceil(p/100 * count) in ascending order, to within its bucket's midpoint.
 * 0 when empty.  Non-decreasing in p. */
static inline double bl_hist_percentile(const struct bl_hist *h, double p)
{
	uint64_t rank, seen = 0;
	if (h->count == 0)
		return 0;
	rank = (uint64_t) (p / 100.0 * (double) h->count);
	if ((double) rank < p / 100.0 * (double) h->count)
		rank++; /* ceil without libm */
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < BL_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t width, low = bl_hist_bucket_low(i, &width);
			return (double) low + (double) (width - 1) / 2.0;
		}
	}
	return 0; /* not reached: the buckets sum to count */
}

#endif
