/*
 * What the Linux baseline server and client share: strict option parsing,
 * the payload, the clock, stop signals and thread placement.
 */
#ifndef LINUX_BASELINE_COMMON_H
#define LINUX_BASELINE_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../io/common/corelist.h"

#define BL_DEFAULT_STOP_PORT (50000) /* as in bench-iip: a connection here stops the server */
#define BL_PAYLOAD_MAX (16u << 20)

/* Set by SIGINT/SIGTERM, a remote stop, the end of the run or a fatal error;
 * every loop polls it at least every 100 ms. */
static atomic_int bl_stop;

static void bl_on_signal(int sig)
{
	(void) sig;
	atomic_store(&bl_stop, 1);
}

/* No SA_RESTART: a blocking call in the main thread returns EINTR and the
 * loop notices bl_stop at once. */
static void bl_install_stop_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bl_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a peer that resets must not kill us on write */
}

static uint64_t bl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Parses the whole of s as a decimal integer in [min, max]; on failure
 * prints "<prog>: -<opt>: ..." and returns -1. */
static int bl_parse_long(const char *prog, char opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno == ERANGE) {
		fprintf(stderr, "%s: -%c: \"%s\" is not a number\n", prog, opt, s);
		return -1;
	}
	if (v < min || v > max) {
		fprintf(stderr, "%s: -%c: %ld is out of range [%ld, %ld]\n", prog, opt, v, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* The payload: the -m string if given, else -l bytes of filler. */
struct bl_payload {
	char *data;
	size_t len;
};

static int bl_payload_make(struct bl_payload *p, const char *message, long length)
{
	if (message) {
		p->len = strlen(message);
		if (p->len == 0) {
			fprintf(stderr, "-m: the payload string is empty\n");
			return -1;
		}
		p->data = strdup(message);
	} else {
		p->len = (size_t) length;
		p->data = malloc(p->len);
		if (p->data)
			memset(p->data, 'x', p->len);
	}
	if (p->data == NULL) {
		fprintf(stderr, "out of memory for a %zu-byte payload\n", p->len);
		return -1;
	}
	return 0;
}

/* Parses a core list option and checks that this process may run on every
 * core in it (so pinning cannot fail later, in a thread). */
static int bl_cores_parse(const char *prog, char opt, const char *s, struct io_corelist *list)
{
	char err[256];
	cpu_set_t allowed;

	if (io_corelist_parse(s, list, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: -%c: %s\n", prog, opt, err);
		return -1;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", prog, strerror(errno));
		return -1;
	}
	for (uint16_t i = 0; i < list->count; i++) {
		if (!CPU_ISSET(list->cores[i], &allowed)) {
			fprintf(stderr, "%s: -%c: core %u is not available to this process (%d usable cores)\n", prog,
				opt, list->cores[i], CPU_COUNT(&allowed));
			return -1;
		}
	}
	return 0;
}

static int bl_pin_self(uint16_t core)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#endif
