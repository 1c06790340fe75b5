/*
 * io/common/threads.h — one networking thread per core of -l: the check
 * that the cores exist, and starting a thread pinned to its core.
 */
#ifndef IO_COMMON_THREADS_H
#define IO_COMMON_THREADS_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "corelist.h"

/* 0 when every core of the list exists; otherwise says which does not */
static inline int io_threads_check_cores(const char *prog, const struct io_corelist *cores)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint16_t i;
	for (i = 0; i < cores->count; i++) {
		if (cores->cores[i] >= (uint16_t) ncpu) {
			fprintf(stderr, "%s: -l: core %u does not exist (%ld cores)\n", prog, cores->cores[i], ncpu);
			return -1;
		}
	}
	return 0;
}

/*
 * Starts fn(arg) and pins it to core. Returns pthread_create's error (0:
 * started); a thread that cannot be pinned runs anyway, with a warning
 * naming thread index.
 */
static inline int io_threads_start_pinned(const char *prog, pthread_t *th, void *(*fn)(void *), void *arg,
					  uint16_t index, uint16_t core)
{
	cpu_set_t cs;
	int e = pthread_create(th, NULL, fn, arg);
	if (e) {
		fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(e));
		return e;
	}
	CPU_ZERO(&cs);
	CPU_SET(core, &cs);
	if ((e = pthread_setaffinity_np(*th, sizeof(cs), &cs)))
		fprintf(stderr, "%s: warning: cannot pin thread %u to core %u: %s\n", prog, index, core, strerror(e));
	return 0;
}

#endif /* IO_COMMON_THREADS_H */
