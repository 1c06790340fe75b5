/*
 * io/threadmodel/opts.h — the thread-model options: a section of their own
 * after the application's options, or the IIP_THREADMODEL environment
 * variable for every application instance that has no section.
 *
 *   [backend options] -- [app options] --tm [thread-model options]
 *   [backend options] -- [app options] -- [thread-model options]   (not with io/loop,
 *                                         where every "--" starts another host)
 *   IIP_THREADMODEL="-m split -c 1" ./a.out ...
 *
 *   -m unified|split|merge   the model (default unified: the layer is a pass-through)
 *   -c LIST                  cores of the application threads, one per networking
 *                            thread in start order ("1", "2,3", "4-7")
 *   -b N                     events (operations) queued before the other thread
 *                            is told; everything is told at the end of each
 *                            networking iteration anyway (default 32)
 *   -w US                    merge: longest sleep of an application thread with
 *                            nothing to do, unless __app_loop asks for less (10000)
 *   -q N                     slots per queue, a power of two 64..65536 (1024)
 *   -a N                     packets kept allocated for the application thread (128)
 *   -r PRIO                  merge: SCHED_FIFO priority of the application thread,
 *                            0 = leave it at the normal policy (1)
 *   -v                       print the layer's counters at exit
 *
 * Seed 003's sub/main.c options are accepted too: -e MS (merge, waiting at
 * most MS ms), -n N (number of networking threads: ignored, the layer
 * counts them); without -m, -e means merge and -c alone means split, so
 * the seed's "-b 1 -c 2 -n 1" and "-b 32 -c 0-1 -n 2 -e 100" work as written.
 *
 * Parsed by hand, not with getopt: the application's own parser has just
 * used getopt's global state and may rely on it afterwards.
 */
#ifndef IO_THREADMODEL_OPTS_H
#define IO_THREADMODEL_OPTS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TM_UNIFIED = 0, TM_SPLIT = 1, TM_MERGE = 2 };

#define TM_MAX_CORES (256)

struct tm_opts {
	int model;
	uint16_t ncores;
	uint16_t cores[TM_MAX_CORES];
	uint32_t batch, wait_us, slots, supply, verbose;
	int fifo_prio;
};

static const char *tm_model_name(int m)
{
	return m == TM_SPLIT ? "split" : m == TM_MERGE ? "merge" : "unified";
}

static void tm_usage(void)
{
	fprintf(stderr, "threadmodel options: [-m unified|split|merge] [-c CORES] [-b BATCH] [-w WAIT_US] "
			"[-q SLOTS] [-a PKTS] [-r FIFO_PRIO] [-v] (seed 003: [-e WAIT_MS] [-n IO_THREADS])\n");
}

static int tm_parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;
	if (!s || !*s || *s == '-')
		goto bad;
	v = strtoul(s, &end, 10);
	if (*end || v < min || v > max)
		goto bad;
	*out = (uint32_t) v;
	return 0;
bad:
	fprintf(stderr, "threadmodel: %s needs a number in %u..%u, got '%s'\n", opt, min, max, s ? s : "");
	return -1;
}

/* "1", "2,3", "4-7,9" */
static int tm_parse_cores(const char *s, struct tm_opts *o)
{
	const char *p = s;
	o->ncores = 0;
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a, c;
		if (end == p || a > 4095)
			goto bad;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 4095)
				goto bad;
			p = end;
		}
		for (c = a; c <= b; c++) {
			if (o->ncores == TM_MAX_CORES)
				goto bad;
			o->cores[o->ncores++] = (uint16_t) c;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (o->ncores)
		return 0;
bad:
	fprintf(stderr, "threadmodel: -c needs a core list such as 1 or 2,3 or 4-7 (at most %d cores), got '%s'\n",
		TM_MAX_CORES, s);
	return -1;
}

static void tm_opts_default(struct tm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->model = TM_UNIFIED;
	o->batch = 32;
	o->wait_us = 10000;
	o->slots = 1024;
	o->supply = 128;
	o->fifo_prio = 1;
}

static int tm_parse(int argc, char *const *argv, struct tm_opts *o)
{
	int i, model_given = 0, wait_ms_given = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v;
		uint32_t n;
		if (a[0] != '-' || !a[1] || (a[2] && a[1] == 'v')) {
			fprintf(stderr, "threadmodel: unexpected argument '%s'\n", a);
			goto usage;
		}
		if (a[1] == 'v') {
			o->verbose = 1;
			continue;
		}
		v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
		switch (a[1]) {
		case 'm':
			if (v && !strcmp(v, "unified"))
				o->model = TM_UNIFIED;
			else if (v && !strcmp(v, "split"))
				o->model = TM_SPLIT;
			else if (v && !strcmp(v, "merge"))
				o->model = TM_MERGE;
			else {
				fprintf(stderr, "threadmodel: -m needs unified, split or merge, got '%s'\n", v ? v : "");
				goto usage;
			}
			model_given = 1;
			break;
		case 'e':
			if (tm_parse_u32("-e", v, 1, 10000, &n))
				goto usage;
			o->wait_us = n * 1000;
			wait_ms_given = 1;
			break;
		case 'n':
			if (tm_parse_u32("-n", v, 1, TM_MAX_CORES, &n))
				goto usage;
			break;
		case 'c':
			if (!v || tm_parse_cores(v, o))
				goto usage;
			break;
		case 'b':
			if (tm_parse_u32("-b", v, 1, 65536, &o->batch))
				goto usage;
			break;
		case 'w':
			if (tm_parse_u32("-w", v, 1, 10000000, &o->wait_us))
				goto usage;
			break;
		case 'q':
			if (tm_parse_u32("-q", v, 64, 65536, &o->slots))
				goto usage;
			if (o->slots & (o->slots - 1)) {
				fprintf(stderr, "threadmodel: -q needs a power of two, got %u\n", o->slots);
				goto usage;
			}
			break;
		case 'a':
			if (tm_parse_u32("-a", v, 1, 65536, &o->supply))
				goto usage;
			break;
		case 'r':
			if (tm_parse_u32("-r", v, 0, 99, &n))
				goto usage;
			o->fifo_prio = (int) n;
			break;
		default:
			fprintf(stderr, "threadmodel: unknown option '%s'\n", a);
			goto usage;
		}
	}
	if (!model_given && wait_ms_given)
		o->model = TM_MERGE;
	else if (!model_given && o->ncores)
		o->model = TM_SPLIT;
	if (o->supply >= o->slots) {
		fprintf(stderr, "threadmodel: -a %u must be below -q %u\n", o->supply, o->slots);
		goto usage;
	}
	if (o->batch > o->slots)
		o->batch = o->slots;
	return 0;
usage:
	tm_usage();
	return -1;
}

/* the IIP_THREADMODEL variable: words separated by blanks */
static int tm_parse_env(const char *s, struct tm_opts *o)
{
	char *copy = strdup(s), *save = NULL, *w;
	char *words[64];
	int n = 0, rc;
	if (!copy)
		return -1;
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == 64) {
			fprintf(stderr, "threadmodel: IIP_THREADMODEL has too many words\n");
			free(copy);
			return -1;
		}
		words[n++] = w;
	}
	rc = tm_parse(n, words, o);
	free(copy);
	return rc;
}

#endif
