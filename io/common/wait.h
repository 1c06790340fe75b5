/*
 * io/common/wait.h — the idle wait of a backend thread whose receive side is
 * one file descriptor (a tap queue, a packet socket): sleep until it is
 * readable, for at most the stack's next_us, the -e limit and 100 ms (so
 * that a signal's stop flag is seen).
 */
#ifndef IO_COMMON_WAIT_H
#define IO_COMMON_WAIT_H

#include <poll.h>
#include <stdint.h>
#include <time.h>

#define IO_WAIT_MAX_US 100000 /* wake at least every 100 ms to see signals */

/* wait_ms 0 (busy poll) or next_us 0 (the stack wants to run now): no wait */
static inline void io_wait_readable(int fd, uint32_t wait_ms, uint32_t next_us)
{
	uint64_t us = next_us;
	struct pollfd pfd;
	struct timespec ts;
	if (!wait_ms || !next_us)
		return;
	if (us > (uint64_t) wait_ms * 1000u)
		us = (uint64_t) wait_ms * 1000u;
	if (us > IO_WAIT_MAX_US)
		us = IO_WAIT_MAX_US;
	pfd.fd = fd;
	pfd.events = POLLIN;
	ts.tv_sec = 0;
	ts.tv_nsec = (long) (us * 1000u);
	ppoll(&pfd, 1, &ts, NULL);
}

#endif /* IO_COMMON_WAIT_H */
