/*
 * Tests for apps/linux_baseline/latency_hist.h: bucket boundaries are
 * contiguous, percentiles agree with an exact sorted sample array to within
 * 0.4%, are non-decreasing, and merging equals recording into one.
 */
#include <stdlib.h>

#include "../../apps/linux_baseline/latency_hist.h"
#include "check.h"

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

/* exact percentile of sorted[]: rank ceil(p/100 * n), 1-based */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t) (p / 100.0 * (double) n);
	if ((double) rank < p / 100.0 * (double) n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void test_buckets(void)
{
	int ok = 1;
	uint64_t expect_low = 0;
	for (unsigned i = 0; i < BL_HIST_BUCKETS && ok; i++) {
		uint64_t width, low = bl_hist_bucket_low(i, &width);
		/* contiguous, each value maps back into its own bucket, width <= low/128 */
		if (low != expect_low || bl_hist_index(low) != i || bl_hist_index(low + (width - 1)) != i ||
		    (low >= 256 && width * 128 > low))
			ok = 0;
		expect_low = low + width;
	}
	check(ok, "buckets are contiguous, 1 ns wide below 256 ns, at most 1/128 of their value above",
	      "boundary error");
	check(expect_low == 0, "the last bucket ends exactly at 2^64", "ends at %llu", (unsigned long long) expect_low);
	check(bl_hist_index(UINT64_MAX) == BL_HIST_BUCKETS - 1, "UINT64_MAX lands in the last bucket", "index %u",
	      bl_hist_index(UINT64_MAX));
}

static void test_against_exact(const char *name, uint64_t (*gen)(void), size_t n)
{
	static struct bl_hist h;
	static const double ps[] = { 1, 50, 90, 99, 99.9, 99.99, 100 };
	uint64_t *samples = malloc(n * sizeof(*samples));
	double worst = 0, prev = 0;
	int monotonic = 1;
	char what[200];

	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		samples[i] = gen();
		bl_hist_record(&h, samples[i]);
	}
	qsort(samples, n, sizeof(*samples), cmp_u64);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double got = bl_hist_percentile(&h, ps[i]);
		double want = (double) exact_percentile(samples, n, ps[i]);
		double err = want > 0 ? (got > want ? got - want : want - got) / want : got;
		if (err > worst)
			worst = err;
		if (got < prev)
			monotonic = 0;
		prev = got;
	}
	snprintf(what, sizeof(what), "%s: %zu samples, p1..p100 within 0.4%% of the exact sorted array", name, n);
	check(worst <= 0.004 && h.count == n, what, "worst relative error %.5f", worst);
	snprintf(what, sizeof(what), "%s: percentiles non-decreasing", name);
	check(monotonic, what, "decreased");
	free(samples);
}

static uint64_t gen_log_uniform(void) /* 100 ns .. ~10 s, spread over magnitudes */
{
	unsigned bits = 7 + (unsigned) (rnd64() % 27);
	return (1ull << bits) + rnd64() % (1ull << bits);
}

static uint64_t gen_small(void) /* the exact range */
{
	return rnd64() % 300;
}

static uint64_t gen_loopback_like(void) /* ~20 us with a tail */
{
	uint64_t v = 15000 + rnd64() % 10000;
	if (rnd64() % 100 == 0)
		v += rnd64() % 1000000;
	return v;
}

static void test_merge_and_empty(void)
{
	static struct bl_hist a, b, all;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&all, 0, sizeof(all));
	check(bl_hist_percentile(&a, 50) == 0, "empty histogram reports 0", "non-zero");
	for (int i = 0; i < 10000; i++) {
		uint64_t v = gen_log_uniform();
		bl_hist_record(i & 1 ? &a : &b, v);
		bl_hist_record(&all, v);
	}
	bl_hist_merge(&a, &b);
	check(memcmp(&a, &all, sizeof(a)) == 0, "merging two histograms equals recording into one", "differs");

	memset(&a, 0, sizeof(a));
	bl_hist_record(&a, 1000);
	/* 1000 ns lies in the 4 ns wide bucket 1000..1003, reported as its midpoint */
	check(bl_hist_percentile(&a, 1) == 1001.5 && bl_hist_percentile(&a, 99.9) == 1001.5,
	      "a single 1000 ns sample: every percentile is its bucket's midpoint 1001.5", "p50 %.1f", bl_hist_percentile(&a, 50));
	memset(&a, 0, sizeof(a));
	for (uint64_t v = 1; v <= 100; v++)
		bl_hist_record(&a, v);
	check(bl_hist_percentile(&a, 50) == 50 && bl_hist_percentile(&a, 90) == 90 &&
		      bl_hist_percentile(&a, 99) == 99 && bl_hist_percentile(&a, 99.9) == 100,
	      "1..100 ns: p50 50, p90 90, p99 99, p99.9 100 (nearest rank)", "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f",
	      bl_hist_percentile(&a, 50), bl_hist_percentile(&a, 90), bl_hist_percentile(&a, 99),
	      bl_hist_percentile(&a, 99.9));
}

int main(void)
{
	test_buckets();
	test_against_exact("log-uniform 128 ns..17 s", gen_log_uniform, 1000000);
	test_against_exact("0..299 ns (exact buckets)", gen_small, 100000);
	test_against_exact("loopback-like 15..25 us with a 1% tail", gen_loopback_like, 1000000);
	test_against_exact("one sample", gen_loopback_like, 1);
	test_merge_and_empty();
	return check_failures ? 1 : 0;
}
