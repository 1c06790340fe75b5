/* impair: a user-space impairment bridge. This kernel has no netem, so tests
 * that need loss, delay, reordering, duplication or a rate limit put this
 * program between two veths (tools/netns.sh up NAME --bridge) and it forwards
 * every frame from one interface to the other, in both directions, impaired
 * as the options say. See README.md. */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "direction.h"
#include "packet_socket.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* frames read from one interface before looking at the other one again */
#define RECV_BATCH 64
/* veth hands over at most one 64 KiB GSO frame; with offloads off (as the
 * topology sets them) frames are at most MTU + 14 + 4 bytes */
#define RECV_BUF_SIZE (65536 + 128)

static const char *prog = "impair";

static void usage(FILE *out)
{
	fprintf(out,
		"usage: %s -i IF1 -I IF2 [options]\n"
		"Forwards every frame between IF1 and IF2 (both ways), impaired.\n"
		"Impairment values are V (both directions) or V1,V2 (IF1->IF2,IF2->IF1):\n"
		"  -l P     loss probability, 0..1\n"
		"  -d MS    delay in milliseconds (fractions allowed), 0..60000\n"
		"  -j MS    jitter: delay uniform in [d-j, d+j] (clamped at 0); reorders as netem does\n"
		"  -r P     reorder: probability that a due frame is held back\n"
		"  -g N     frames sent before a held-back one (default 1; 10 ms at most)\n"
		"  -u P     duplicate probability\n"
		"  -b MBIT  rate limit in Mbit/s (serialisation of frame bytes), 0 = none\n"
		"  -q N     queue limit in frames per direction, drop tail (default 10000)\n"
		"Other options:\n"
		"  -s SEED  random seed (default: from time and pid; printed at start)\n"
		"  -t SEC   stop after SEC seconds (fractions allowed)\n"
		"  -h       this help\n"
		"Counters per direction are printed on stdout at exit (SIGINT, SIGTERM, -t).\n"
		"Invariant: received + duplicated = forwarded + dropped.\n",
		prog);
}

static void die_usage(const char *fmt, const char *opt, const char *val)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, opt, val);
	fprintf(stderr, " (see %s -h)\n", prog);
	exit(2);
}

static double parse_number(const char *opt, const char *s, double min, double max)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
		die_usage("option %s: '%s' is not a number", opt, s);
	if (v < min || v > max) {
		fprintf(stderr, "%s: option %s: %s is out of range [%g, %g]\n", prog, opt, s, min, max);
		exit(2);
	}
	return v;
}

static double parse_integer(const char *opt, const char *s, double min, double max)
{
	double v = parse_number(opt, s, min, max);
	if (v != floor(v))
		die_usage("option %s: '%s' is not a whole number", opt, s);
	return v;
}

/* "V" or "V1,V2" -> out[0] (IF1->IF2), out[1] (IF2->IF1) */
static void parse_pair(const char *opt, const char *arg, double min, double max, int integer, double out[2])
{
	char buf[128];
	if (strlen(arg) >= sizeof(buf))
		die_usage("option %s: '%s' is too long", opt, arg);
	strcpy(buf, arg);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = '\0';
	if (comma && strchr(comma + 1, ','))
		die_usage("option %s: '%s' has more than two values", opt, arg);
	double (*parse)(const char *, const char *, double, double) = integer ? parse_integer : parse_number;
	out[0] = parse(opt, buf, min, max);
	out[1] = comma ? parse(opt, comma + 1, min, max) : out[0];
}

static uint64_t parse_seed(const char *s)
{
	char *end;
	errno = 0;
	if (*s == '-' || *s == '\0')
		die_usage("option %s: '%s' is not a seed (0..2^64-1)", "-s", s);
	unsigned long long v = strtoull(s, &end, 0);
	if (*end != '\0' || errno != 0)
		die_usage("option %s: '%s' is not a seed (0..2^64-1)", "-s", s);
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void print_params(const char *from, const char *to, const struct impair_params *p, FILE *out)
{
	fprintf(out, "%s: %s->%s: loss=%g duplicate=%g reorder=%g gap=%" PRIu32
		" delay_ms=%g jitter_ms=%g rate_mbit=%g queue=%" PRIu32 "\n",
		prog, from, to, p->loss, p->duplicate, p->reorder, p->reorder_gap,
		(double)p->delay_ns / NS_PER_MS, (double)p->jitter_ns / NS_PER_MS,
		(double)p->rate_bps / 1e6, p->queue_limit);
}

/* Reads up to RECV_BATCH frames from FD into D. Returns the number read, or
 * -1 when the interface is gone (fatal). */
static int read_batch(int fd, struct direction *d, const char *ifname, unsigned char *buf)
{
	int n;
	uint64_t now = now_ns();
	for (n = 0; n < RECV_BATCH; n++) {
		ssize_t len = packet_socket_recv(fd, buf, RECV_BUF_SIZE);
		if (len == 0)
			break;
		if (len < 0) {
			if (errno == ENETDOWN)
				break; /* the link went down; frames resume when it is up */
			fprintf(stderr, "%s: receiving on %s: %s\n", prog, ifname, strerror(errno));
			return -1;
		}
		if (len > RECV_BUF_SIZE)
			direction_count_oversize(d, (uint64_t)len);
		else
			direction_accept(d, buf, (uint32_t)len, now);
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *ifname[2] = { NULL, NULL };
	double loss[2] = { 0, 0 }, dup[2] = { 0, 0 }, reorder[2] = { 0, 0 }, gap[2] = { 1, 1 };
	double delay[2] = { 0, 0 }, jitter[2] = { 0, 0 }, rate[2] = { 0, 0 }, qlimit[2] = { 10000, 10000 };
	uint64_t seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	double run_seconds = 0;
	int opt;

	opterr = 0;
	while ((opt = getopt(argc, argv, ":i:I:l:d:j:r:g:u:b:q:s:t:h")) != -1) {
		char name[3] = { '-', (char)optopt, '\0' };
		if (opt != '?' && opt != ':')
			name[1] = (char)opt;
		switch (opt) {
		case 'i': ifname[0] = optarg; break;
		case 'I': ifname[1] = optarg; break;
		case 'l': parse_pair(name, optarg, 0, 1, 0, loss); break;
		case 'u': parse_pair(name, optarg, 0, 1, 0, dup); break;
		case 'r': parse_pair(name, optarg, 0, 1, 0, reorder); break;
		case 'g': parse_pair(name, optarg, 1, 1000, 1, gap); break;
		case 'd': parse_pair(name, optarg, 0, 60000, 0, delay); break;
		case 'j': parse_pair(name, optarg, 0, 60000, 0, jitter); break;
		case 'b': parse_pair(name, optarg, 0, 1e6, 0, rate); break;
		case 'q': parse_pair(name, optarg, 1, 1000000, 1, qlimit); break;
		case 's': seed = parse_seed(optarg); break;
		case 't': run_seconds = parse_number(name, optarg, 0.001, 1e7); break;
		case 'h': usage(stdout); return 0;
		case ':': die_usage("option %s needs a value%s", name, ""); break;
		default: die_usage("unknown option %s%s", name, ""); break;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument %s%s", argv[optind], "");
	if (!ifname[0] || !ifname[1])
		die_usage("both -i IF1 and -I IF2 are required%s%s", "", "");
	if (strcmp(ifname[0], ifname[1]) == 0)
		die_usage("-i and -I name the same interface %s%s", ifname[0], "");

	int fd[2];
	for (int k = 0; k < 2; k++) {
		char err[256];
		fd[k] = packet_socket_open(ifname[k], err, sizeof(err));
		if (fd[k] < 0) {
			fprintf(stderr, "%s: %s\n", prog, err);
			return 1;
		}
	}

	struct direction dir[2]; /* dir[k]: frames arriving on ifname[k] */
	for (int k = 0; k < 2; k++) {
		struct impair_params p = {
			.loss = loss[k], .duplicate = dup[k], .reorder = reorder[k],
			.reorder_gap = (uint32_t)gap[k],
			.delay_ns = (uint64_t)llround(delay[k] * NS_PER_MS),
			.jitter_ns = (uint64_t)llround(jitter[k] * NS_PER_MS),
			.rate_bps = (uint64_t)llround(rate[k] * 1e6),
			.queue_limit = (uint32_t)qlimit[k],
		};
		/* distinct, reproducible streams per direction */
		if (direction_init(&dir[k], &p, seed ^ (k ? 0x5bd1e9955bd1e995ull : 0), fd[1 - k]) != 0) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return 1;
		}
	}

	/* signals are only delivered inside ppoll(), so a stop request cannot
	 * slip in between the check and the wait */
	sigset_t stop_set, wait_mask;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop_set, &wait_mask);
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	sigdelset(&wait_mask, SIGHUP);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* default timer slack (50 us) would blur sub-millisecond delays */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	print_params(ifname[0], ifname[1], &dir[0].params, stderr);
	print_params(ifname[1], ifname[0], &dir[1].params, stderr);
	fprintf(stderr, "%s: ready: %s <-> %s seed=%" PRIu64 "\n", prog, ifname[0], ifname[1], seed);

	static unsigned char buf[RECV_BUF_SIZE];
	uint64_t stop_at = run_seconds > 0 ? now_ns() + (uint64_t)(run_seconds * NS_PER_S) : 0;
	int status = 0;
	while (!stop_signal) {
		if (stop_at && now_ns() >= stop_at)
			break;
		int more = 0;
		for (int k = 0; k < 2; k++) {
			int n = read_batch(fd[k], &dir[k], ifname[k], buf);
			if (n < 0) {
				status = 1;
				goto out;
			}
			if (n == RECV_BATCH)
				more = 1;
		}
		uint64_t now = now_ns();
		int blocked[2];
		for (int k = 0; k < 2; k++)
			blocked[k] = direction_transmit_due(&dir[k], now);
		if (more)
			continue;

		uint64_t wake = stop_at ? stop_at : UINT64_MAX;
		for (int k = 0; k < 2; k++) {
			uint64_t t = direction_next_due(&dir[k]);
			if (t < wake)
				wake = t;
			/* ENOBUFS does not always come with POLLOUT later: retry soon */
			if (blocked[k] && now + NS_PER_MS < wake)
				wake = now + NS_PER_MS;
		}
		struct pollfd pfd[2];
		for (int k = 0; k < 2; k++) {
			pfd[k].fd = fd[k];
			pfd[k].events = POLLIN | (blocked[1 - k] ? POLLOUT : 0);
			pfd[k].revents = 0;
		}
		struct timespec timeout, *timeout_p = NULL;
		if (wake != UINT64_MAX) {
			uint64_t left = wake > now ? wake - now : 0;
			timeout.tv_sec = (time_t)(left / NS_PER_S);
			timeout.tv_nsec = (long)(left % NS_PER_S);
			timeout_p = &timeout;
		}
		if (ppoll(pfd, 2, timeout_p, &wait_mask) < 0 && errno != EINTR) {
			fprintf(stderr, "%s: ppoll: %s\n", prog, strerror(errno));
			status = 1;
			goto out;
		}
	}
out:
	if (stop_signal)
		fprintf(stderr, "%s: stopping on signal %d\n", prog, (int)stop_signal);
	for (int k = 0; k < 2; k++)
		direction_discard_all(&dir[k]);
	direction_print(&dir[0], ifname[0], ifname[1], stdout);
	direction_print(&dir[1], ifname[1], ifname[0], stdout);
	fflush(stdout);
	for (int k = 0; k < 2; k++) {
		direction_free(&dir[k]);
		close(fd[k]);
	}
	return status;
}
