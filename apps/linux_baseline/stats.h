/*
 * Per-thread traffic counters and the once-a-second report, in the format
 * bench-iip prints, so results of the Linux baseline and of iip can be
 * processed by the same scripts:
 *
 *   [i] payload: rx N Mbps (N read), tx N Mbps (N write)
 *   payload total: rx N Mbps (N pps), tx N Mbps (N pps)
 *
 * Each counter has one writer (its thread) and one reader (the reporter), so
 * relaxed atomic loads and stores suffice and cost no locked instruction.
 */
#ifndef LINUX_BASELINE_STATS_H
#define LINUX_BASELINE_STATS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

struct bl_counters {
	_Atomic uint64_t rx_bytes, rx_ops, tx_bytes, tx_ops;
} __attribute__((aligned(64))); /* one cache line per thread: no false sharing */

static inline void bl_count(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

struct bl_snapshot {
	uint64_t rx_bytes, rx_ops, tx_bytes, tx_ops;
};

static struct bl_snapshot bl_counters_read(struct bl_counters *c)
{
	struct bl_snapshot s = {
		atomic_load_explicit(&c->rx_bytes, memory_order_relaxed),
		atomic_load_explicit(&c->rx_ops, memory_order_relaxed),
		atomic_load_explicit(&c->tx_bytes, memory_order_relaxed),
		atomic_load_explicit(&c->tx_ops, memory_order_relaxed),
	};
	return s;
}

/* Prints the lines for the interval since the previous call; prev[] holds
 * each thread's snapshot from then.  Rates use the measured interval. */
static void bl_report_interval(struct bl_counters *counters, struct bl_snapshot *prev, unsigned num_threads,
			       uint64_t interval_ns)
{
	struct bl_snapshot total = { 0, 0, 0, 0 };
	double seconds = interval_ns ? (double) interval_ns / 1e9 : 1.0;

	for (unsigned i = 0; i < num_threads; i++) {
		struct bl_snapshot now = bl_counters_read(&counters[i]);
		struct bl_snapshot d = {
			now.rx_bytes - prev[i].rx_bytes, now.rx_ops - prev[i].rx_ops,
			now.tx_bytes - prev[i].tx_bytes, now.tx_ops - prev[i].tx_ops,
		};
		prev[i] = now;
		printf("[%u] payload: rx %lu Mbps (%lu read), tx %lu Mbps (%lu write)\n", i,
		       (unsigned long) ((double) d.rx_bytes * 8 / 1e6 / seconds), (unsigned long) d.rx_ops,
		       (unsigned long) ((double) d.tx_bytes * 8 / 1e6 / seconds), (unsigned long) d.tx_ops);
		total.rx_bytes += d.rx_bytes;
		total.rx_ops += d.rx_ops;
		total.tx_bytes += d.tx_bytes;
		total.tx_ops += d.tx_ops;
	}
	printf("payload total: rx %lu Mbps (%lu pps), tx %lu Mbps (%lu pps)\n",
	       (unsigned long) ((double) total.rx_bytes * 8 / 1e6 / seconds),
	       (unsigned long) ((double) total.rx_ops / seconds),
	       (unsigned long) ((double) total.tx_bytes * 8 / 1e6 / seconds),
	       (unsigned long) ((double) total.tx_ops / seconds));
	fflush(stdout);
}

#endif
