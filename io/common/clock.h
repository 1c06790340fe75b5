/*
 * io/common/clock.h — the monotonic clock of the backends that run in real
 * time (tap, af_packet, af_xdp, dpdk; the loop backend has its own, which
 * can be virtual), and iip_ops_util_now_ns on top of it for applications
 * that leave the clock to the backend (APP_IIP_OPS_UTIL_NOW_NS_NONE,
 * COMPAT.md section 3).
 */
#ifndef IO_COMMON_CLOCK_H
#define IO_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t io_clock_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

#ifdef APP_IIP_OPS_UTIL_NOW_NS_NONE
/* seconds (high and low 32 bits) and nanoseconds, as the stack wants them */
static void iip_ops_util_now_ns(uint32_t t[3], void *opaque)
{
	uint64_t now = io_clock_now_ns(), s = now / 1000000000ull;
	(void) opaque;
	t[0] = (uint32_t) (s >> 32);
	t[1] = (uint32_t) s;
	t[2] = (uint32_t) (now % 1000000000ull);
}
#endif

#endif /* IO_COMMON_CLOCK_H */
