/*
 * io/common/stack_counters.h — the stack's statistics counters (iip_stats,
 * our extension of the API) printed at exit by the tap and af_packet
 * backends, one line per thread. Include after the stack.
 */
#ifndef IO_COMMON_STACK_COUNTERS_H
#define IO_COMMON_STACK_COUNTERS_H

#include <stdint.h>
#include <stdio.h>

/* the stack's non-zero counters of one thread, on one line:
 * "<label>: thread <i>: stack: name=value ..." */
static inline void io_stack_print_counters(const char *label, uint16_t i, void *workspace)
{
	struct iip_stats st;
	const unsigned long *v = (const unsigned long *) &st;
	uint32_t k;
	iip_stats_get(workspace, &st);
	printf("%s: thread %u: stack:", label, i);
	for (k = 0; iip_stats_name(k) && k < sizeof(st) / sizeof(*v); k++)
		if (v[k])
			printf(" %s=%lu", iip_stats_name(k), v[k]);
	printf("\n");
}

#endif /* IO_COMMON_STACK_COUNTERS_H */
