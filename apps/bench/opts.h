/*
 * apps/bench/opts.h — the benchmark's command line (the third section of
 * seed 003's command line, after the backend's options) and the messages
 * it sends.
 *
 * The option letters are bench-iip's (seed 003, "3rd section") plus the ones
 * the Linux baseline (apps/linux_baseline) added, with the same meaning, so
 * that one script drives both:
 *
 *   -s IP      client mode: the server to connect to (absent: server mode)
 *   -p PORT    server port (listen / connect)
 *   -c N       client: connections (UDP: flows) per thread
 *   -d N       io depth: requests in flight per connection (ping-pong);
 *              burst: writes of -l bytes kept queued per connection
 *   -g 1|2     1 ping-pong, 2 burst (client sends whenever data is acked,
 *              server discards what it receives)
 *   -l LEN     payload length (the filler pattern), -m STRING the payload
 *   -n 6|17    TCP or UDP
 *   -r RATE    client: requests (burst: writes) per second per thread
 *   -t SEC     duration, 0 = until a stop (signal, remote stop)
 *   -v LEVEL   0 summary only, 1 + per-second lines (default), 2 + events
 *   -q LEN     server: request length; answer once per LEN bytes received
 *              (default: once per received packet, bench-iip's behaviour)
 *   -R LEN     client: reply length that completes a request (default the
 *              request length)
 *   -M STRING  the peer's message: client, the reply (sets -R); server, the
 *              request (sets -q)
 *   -x         verify every payload byte received against the peer's
 *              message (the filler of -R / -q bytes, or -M)
 *   -k         client: at the end, stop the server via its remote-stop port
 *   -K PORT    remote-stop port (default 50000, 0 = none)
 *
 * Any bad option: a message naming it, the usage, exit status 2.
 */
#ifndef APPS_BENCH_OPTS_H
#define APPS_BENCH_OPTS_H

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#define BENCH_PINGPONG (1)
#define BENCH_BURST (2)
#define BENCH_DEFAULT_STOP_PORT (50000) /* as bench-iip's Linux server and our baseline */
#define BENCH_MSG_MAX (16u << 20)
/* one datagram per request, in one packet buffer of a 1500-byte MTU link */
#define BENCH_UDP_MSG_MAX (1472u)

/*
 * The filler: byte i of an -l payload is BENCH_PATTERN[i % 61].  Printable
 * (an HTTP client could show it) and with a prime period, so a segment
 * delivered at the wrong offset of a long payload does not match.
 */
#define BENCH_PATTERN "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"
#define BENCH_PATTERN_LEN (61u)

struct bench_msg {
	uint8_t *bytes;
	uint32_t len;
};

struct bench_opts {
	int client;              /* -s given */
	uint32_t server_ip4_be;
	uint16_t port_be;
	int proto;               /* 6 or 17 */
	int mode;                /* BENCH_PINGPONG or BENCH_BURST */
	uint32_t conns, depth;
	uint64_t rate;           /* 0 = unlimited */
	uint64_t duration_s;     /* 0 = infinite */
	int verbose;
	uint32_t request_len;    /* server -q, 0 = per packet */
	int check;               /* -x */
	int remote_stop;         /* -k */
	uint16_t stop_port_be;   /* -K, 0 = none */
	struct bench_msg msg;    /* what we send: requests (client) or replies (server) */
	struct bench_msg expect; /* client: the reply; server: the request (-q) */
};

static void bench_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [backend options] -- [options]\n"
		"  server: -p PORT [-g 1|2] [-l LEN | -m STRING] [-n 6|17] [-q LEN | -M STRING] [-x] [-t SEC] [-K PORT] [-v N]\n"
		"  client: -s IP -p PORT [-c CONNS] [-d DEPTH] [-g 1|2] [-l LEN | -m STRING] [-n 6|17]\n"
		"          [-r RATE] [-R LEN | -M STRING] [-x] [-t SEC] [-k] [-K PORT] [-v N]\n"
		"  -s IP      client mode: the server's IPv4 address (absent: server mode)\n"
		"  -p PORT    server port, 1..65535 (required)\n"
		"  -c CONNS   client: connections (UDP: flows) per thread (default 1)\n"
		"  -d DEPTH   requests in flight per connection; burst: writes queued (default 1)\n"
		"  -g MODE    1 ping-pong (default), 2 burst\n"
		"  -l LEN     payload length in bytes (default 1; UDP at most %u)\n"
		"  -m STRING  payload string (instead of -l), e.g. an HTTP response\n"
		"  -n PROTO   6 TCP (default) or 17 UDP\n"
		"  -r RATE    client: requests (burst: writes) per second per thread, 0 = unlimited\n"
		"  -t SEC     duration in seconds, 0 = until stopped (default 0)\n"
		"  -v LEVEL   0 summary only, 1 per-second lines (default), 2 events too\n"
		"  -q LEN     server: answer once per LEN request bytes (default: once per packet)\n"
		"  -R LEN     client: reply bytes that complete a request (default: the request length)\n"
		"  -M STRING  the peer's message: client, the reply (sets -R); server, the request (sets -q)\n"
		"  -x         verify every received payload byte against the peer's message (the filler\n"
		"             of -R / -q bytes, or -M); a server needs -q or -M\n"
		"  -k         client: stop the server through its remote-stop port at the end\n"
		"  -K PORT    remote-stop port (default %d, 0 = none)\n",
		prog, BENCH_UDP_MSG_MAX, BENCH_DEFAULT_STOP_PORT);
}

static int bench_bad(const char *prog, int opt, const char *arg, const char *why)
{
	if (arg)
		fprintf(stderr, "bench: -%c \"%s\": %s\n", opt, arg, why);
	else
		fprintf(stderr, "bench: %s\n", why);
	bench_usage(stderr, prog);
	return -1;
}

/* the whole of s as a decimal number in [min, max] */
static int bench_num(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int bench_msg_filler(struct bench_msg *m, uint32_t len)
{
	uint32_t i;
	m->bytes = malloc(len ? len : 1);
	if (!m->bytes)
		return -1;
	for (i = 0; i < len; i++)
		m->bytes[i] = (uint8_t) BENCH_PATTERN[i % BENCH_PATTERN_LEN];
	m->len = len;
	return 0;
}

static int bench_msg_string(struct bench_msg *m, const char *s)
{
	m->len = (uint32_t) strlen(s);
	m->bytes = malloc(m->len ? m->len : 1);
	if (!m->bytes)
		return -1;
	memcpy(m->bytes, s, m->len);
	return 0;
}

/* Parses argv (argv[0] = program name) into o; -1 after printing why. */
static int bench_parse(int argc, char *const *argv, struct bench_opts *o)
{
	const char *prog = argv[0], *message = NULL, *expect = NULL;
	uint64_t v, length = 1, reply_len = 0;
	int opt, have_port = 0, have_c = 0, have_d = 0, have_r = 0, have_R = 0, have_l = 0;
	struct in_addr in;

	memset(o, 0, sizeof(*o));
	o->proto = 6;
	o->mode = BENCH_PINGPONG;
	o->conns = 1;
	o->depth = 1;
	o->verbose = 1;
	o->stop_port_be = htons(BENCH_DEFAULT_STOP_PORT);
	opterr = 0; /* our own messages */
	while ((opt = getopt(argc, argv, ":c:d:g:l:m:n:p:r:s:t:v:q:R:M:xkK:h")) != -1) {
		switch (opt) {
		case 'c':
			if (bench_num(optarg, 1, 65535, &v))
				return bench_bad(prog, opt, optarg, "connections must be 1..65535");
			o->conns = (uint32_t) v;
			have_c = 1;
			break;
		case 'd':
			if (bench_num(optarg, 1, 65536, &v))
				return bench_bad(prog, opt, optarg, "depth must be 1..65536");
			o->depth = (uint32_t) v;
			have_d = 1;
			break;
		case 'g':
			if (bench_num(optarg, 1, 2, &v))
				return bench_bad(prog, opt, optarg, "mode must be 1 (ping-pong) or 2 (burst)");
			o->mode = (int) v;
			break;
		case 'l':
			if (bench_num(optarg, 1, BENCH_MSG_MAX, &length))
				return bench_bad(prog, opt, optarg, "payload length must be 1..16777216");
			have_l = 1;
			break;
		case 'm':
			if (!optarg[0] || strlen(optarg) > BENCH_MSG_MAX)
				return bench_bad(prog, opt, optarg, "payload string must be 1..16777216 bytes");
			message = optarg;
			break;
		case 'n':
			if (bench_num(optarg, 6, 17, &v) || (v != 6 && v != 17))
				return bench_bad(prog, opt, optarg, "protocol must be 6 (TCP) or 17 (UDP)");
			o->proto = (int) v;
			break;
		case 'p':
			if (bench_num(optarg, 1, 65535, &v))
				return bench_bad(prog, opt, optarg, "port must be 1..65535");
			o->port_be = htons((uint16_t) v);
			have_port = 1;
			break;
		case 'r':
			if (bench_num(optarg, 0, 1000000000ull, &v))
				return bench_bad(prog, opt, optarg, "rate must be 0..1000000000 per second");
			o->rate = v;
			have_r = 1;
			break;
		case 's':
			if (inet_pton(AF_INET, optarg, &in) != 1 || in.s_addr == 0 || in.s_addr == 0xffffffffu)
				return bench_bad(prog, opt, optarg, "not a unicast IPv4 address");
			o->server_ip4_be = in.s_addr;
			o->client = 1;
			break;
		case 't':
			if (bench_num(optarg, 0, 100000000ull, &v))
				return bench_bad(prog, opt, optarg, "duration must be 0..100000000 seconds");
			o->duration_s = v;
			break;
		case 'v':
			if (bench_num(optarg, 0, 2, &v))
				return bench_bad(prog, opt, optarg, "verbosity must be 0, 1 or 2");
			o->verbose = (int) v;
			break;
		case 'q':
			if (bench_num(optarg, 1, BENCH_MSG_MAX, &v))
				return bench_bad(prog, opt, optarg, "request length must be 1..16777216");
			o->request_len = (uint32_t) v;
			break;
		case 'R':
			if (bench_num(optarg, 1, BENCH_MSG_MAX, &reply_len))
				return bench_bad(prog, opt, optarg, "reply length must be 1..16777216");
			have_R = 1;
			break;
		case 'M':
			if (!optarg[0] || strlen(optarg) > BENCH_MSG_MAX)
				return bench_bad(prog, opt, optarg, "reply string must be 1..16777216 bytes");
			expect = optarg;
			break;
		case 'x': o->check = 1; break;
		case 'k': o->remote_stop = 1; break;
		case 'K':
			if (bench_num(optarg, 0, 65535, &v))
				return bench_bad(prog, opt, optarg, "remote-stop port must be 0..65535 (0 = none)");
			o->stop_port_be = htons((uint16_t) v);
			break;
		case 'h':
			bench_usage(stdout, prog);
			exit(0);
		case ':': {
			char why[64];
			snprintf(why, sizeof(why), "option -%c needs a value", optopt);
			return bench_bad(prog, 0, NULL, why);
		}
		default: {
			char why[64];
			snprintf(why, sizeof(why), "unknown option -%c", optopt);
			return bench_bad(prog, 0, NULL, why);
		}
		}
	}
	if (optind < argc)
		return bench_bad(prog, 0, NULL, "unexpected argument (options come after the backend's \"--\")");
	if (!have_port)
		return bench_bad(prog, 0, NULL, "-p PORT is required");
	if (message && have_l)
		return bench_bad(prog, 0, NULL, "-l and -m are exclusive");
	if (expect && have_R)
		return bench_bad(prog, 0, NULL, "-R and -M are exclusive");
	if (o->client) {
		if (o->request_len)
			return bench_bad(prog, 'q', NULL, "-q is a server option");
		if (o->stop_port_be == 0 && o->remote_stop)
			return bench_bad(prog, 'k', NULL, "-k needs a remote-stop port (-K 0 given)");
	} else {
		if (have_c || have_d || have_r || have_R || o->remote_stop)
			return bench_bad(prog, 0, NULL, "-c, -d, -r, -R and -k are client options (give -s IP)");
		if (expect && o->request_len)
			return bench_bad(prog, 0, NULL, "-q and -M are exclusive");
		if (expect)
			o->request_len = (uint32_t) strlen(expect);
		if (o->check && !o->request_len)
			return bench_bad(prog, 'x', NULL, "server -x needs -q LEN or -M STRING (the client's request)");
		if (o->stop_port_be == o->port_be && o->proto == 6)
			return bench_bad(prog, 0, NULL, "-p and the remote-stop port -K are the same");
	}
	if (message ? bench_msg_string(&o->msg, message) : bench_msg_filler(&o->msg, (uint32_t) length))
		return bench_bad(prog, 0, NULL, "out of memory for the payload");
	if (o->client)
		reply_len = expect ? strlen(expect) : have_R ? reply_len : o->msg.len;
	else
		reply_len = o->request_len ? o->request_len : 1;
	if (expect ? bench_msg_string(&o->expect, expect) : bench_msg_filler(&o->expect, (uint32_t) reply_len))
		return bench_bad(prog, 0, NULL, "out of memory for the expected payload");
	if (o->proto == 17 && (o->msg.len > BENCH_UDP_MSG_MAX || o->expect.len > BENCH_UDP_MSG_MAX)) {
		char why[96];
		snprintf(why, sizeof(why), "UDP payloads are one datagram of at most %u bytes", BENCH_UDP_MSG_MAX);
		return bench_bad(prog, 0, NULL, why);
	}
	return 0;
}

#endif
