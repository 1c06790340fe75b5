/*
 * io/loop/main.c — the in-process loop backend.
 *
 * Several hosts live in one process, each with its own stack workspace,
 * packet pool, MAC (02:00:00:00:00:NN) and IPv4 address (10.0.0.N unless
 * -a says otherwise), joined by an emulated Ethernet segment (link.h) that
 * can lose, duplicate, reorder and corrupt frames and model delay and
 * bandwidth. One thread runs every host in turn, so there is no locking;
 * with -V the clock is virtual and a run depends only on its seed.
 *
 * Command line (COMPAT.md section 3, seed-003 shape):
 *   app [loop options] -- [app options of host 1] -- [app options of host 2] ...
 * Each "--" section is one host; __app_init is called once per host with
 * that host's section (argv[0] is the program name), then
 * __app_thread_init(workspace, host_index, opaque).
 *
 * The application defines APP_IIP_OPS_UTIL_NOW_NS_NONE to use this
 * backend's clock (required for deterministic -V runs).
 *
 * Per-iteration order, for each host: deliver the frames due (one rx batch
 * to iip_run), __app_loop, then transmit what was pushed. The emulated NIC
 * finishes offloads (checksums, TSO) on transmit, copies every frame into
 * a buffer of the receiving host's pool (as a NIC DMAs into its rx ring) and
 * verifies checksums on receive when checksum offload is on.
 *
 * This file is included into the application's translation unit after the
 * stack; it needs libc only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "../common/pkt.h"
#include "../common/pkt_offload.h"
#include "../common/pcap.h"
#include "../common/args.h"
#include "../common/stack_setup.h"
#include "link.h"

#include "../common/app_contract.h"
#include "../common/nic_features.h"

#define LOOP_MAX_HOSTS 64
#define LOOP_MAX_TSO_SEGS 64          /* 64 KiB at MSS >= 1024; more is an error */
#define LOOP_VIRTUAL_EPOCH_S 1700000000ull /* pcap timestamps of -V runs */

/* NIC features (-F) */
#define LOOP_F_SG   (1u << 0)
#define LOOP_F_TSO  (1u << 1)
#define LOOP_F_CSUM (1u << 2)
#define LOOP_F_LRO  (1u << 3)

struct loop_host {
	uint16_t index;
	uint8_t mac[6];
	uint32_t ip4_be;
	void *workspace;
	void *conns;
	void *pbs;
	struct io_pkt_pool pool;
	void *opaque[3];         /* [0] this host, [1] app global, [2] app thread */
	int argc;
	char **argv;
	struct io_pkt **tx;      /* pushed, waiting for flush */
	uint32_t ntx;
	struct io_pkt **rx;      /* delivered, waiting for iip_run */
	uint32_t nrx;
	uint64_t deadline_ns;    /* iip_run / __app_loop wanted by then */
	struct io_offload_stats offload;
	uint64_t tx_frames, rx_frames, tx_drop_oversize, tx_drop_unknown_dst, tx_drop_error, rx_drop_full;
};

struct loop_conf {
	uint16_t nhosts;
	uint32_t ip4_be[LOOP_MAX_HOSTS];
	uint16_t nip;
	struct loop_link_conf link;
	uint64_t seed;
	int virtual_clock;
	double hard_stop_s;
	const char *pcap_path;
	int pcap_nsec;
	uint32_t features;
	uint16_t mtu;
	uint32_t nbufs, nbig, nconn, npb, batch;
};

struct loop_state {
	struct loop_conf conf;
	struct loop_host *hosts;
	struct loop_link link;
	struct io_pcap pcap;
	int pcap_on;
	uint64_t now_ns;          /* the clock every host reads */
	uint64_t start_ns;        /* real mode: monotonic time at start */
	uint64_t pcap_epoch_ns;   /* added to now for pcap timestamps */
	uint64_t rounds;
};

static struct loop_state loop;

#define IO_PKT_POOL_OF(opaque) (&((struct loop_host *) ((void **) (opaque))[0])->pool)
#include "../common/pkt_ops.h"
#include "../common/eth_ops.h"

static struct loop_host *loop_host_of(void *opaque)
{
	return (struct loop_host *) ((void **) opaque)[0];
}

/* ---- clock ------------------------------------------------------------------ */

static uint64_t loop_monotonic_ns(void)
{
	struct timespec ts;
#ifdef CLOCK_MONOTONIC_RAW
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)
#endif
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* real mode reads the clock; virtual mode returns the counter */
static uint64_t loop_now(void)
{
	if (!loop.conf.virtual_clock)
		loop.now_ns = loop_monotonic_ns();
	return loop.now_ns;
}

#ifdef APP_IIP_OPS_UTIL_NOW_NS_NONE
static void iip_ops_util_now_ns(uint32_t t[3], void *opaque)
{
	uint64_t now = loop_now(), s = now / 1000000000ull;
	(void) opaque;
	t[0] = (uint32_t) (s >> 32);
	t[1] = (uint32_t) s;
	t[2] = (uint32_t) (now % 1000000000ull);
}
#endif

/* ---- L2 and NIC callbacks --------------------------------------------------- */

/* the segment delivers only frames for us (or broadcast), so nothing to skip */
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque)
{
	(void) pkt;
	(void) opaque;
	return 0;
}

/* -F csum is every checksum, the IPv4 header's too */
static uint32_t io_nic_features(void *opaque)
{
	uint32_t f = loop.conf.features;
	(void) opaque;
	return ((f & LOOP_F_SG) ? IO_NIC_F_SG : 0) | ((f & LOOP_F_TSO) ? IO_NIC_F_TSO : 0) |
	       ((f & LOOP_F_CSUM) ? IO_NIC_F_L4_CSUM | IO_NIC_F_IP4_CSUM : 0);
}

/* one flow, one thread */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	(void) protocol; (void) local_ip4_be; (void) local_port_be; (void) peer_ip4_be; (void) peer_port_be;
	(void) opaque;
	return 0;
}

/* ---- transmit ------------------------------------------------------------------ */

static void loop_capture(void *ctx, const struct io_pkt *pkt, uint64_t t_ns)
{
	const struct io_pkt *s;
	(void) ctx;
	io_pcap_begin(&loop.pcap, loop.pcap_epoch_ns + t_ns, io_pkt_total_len(pkt));
	for (s = pkt; s; s = s->next)
		io_pcap_append(&loop.pcap, s->data, s->len);
	io_pcap_end(&loop.pcap);
}

static int loop_no_fault(void)
{
	const struct loop_link_conf *c = &loop.conf.link;
	return c->loss == 0 && c->duplicate == 0 && c->reorder == 0 && c->corrupt == 0;
}

/* the wire frames of `frame` for host dst, put on the link */
static void loop_transmit_to(struct loop_host *src, struct loop_host *dst, const struct io_pkt *frame)
{
	struct io_pkt *out[LOOP_MAX_TSO_SEGS];
	int n, i;
	if ((frame->flags & IO_PKT_F_TX_TCP_TSO) && (loop.conf.features & LOOP_F_LRO) && loop_no_fault() &&
	    (out[0] = io_pkt_finish_unsegmented(&dst->pool, frame)) != NULL) {
		/* GSO/GRO as on veth: the receiver takes the big frame as it is */
		n = 1;
	} else {
		n = io_pkt_finish_tx_offloads(&dst->pool, frame, loop.conf.mtu, out, LOOP_MAX_TSO_SEGS, &src->offload);
		if (n < 0) {
			src->tx_drop_error++;
			return;
		}
		for (i = 0; i < n; i++) {
			if (io_pkt_total_len(out[i]) > (uint32_t) loop.conf.mtu + 14u) {
				/* a real NIC would not send it: count, do not deliver */
				src->tx_drop_oversize++;
				io_pkt_free(out[i]);
				out[i] = NULL;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (!out[i])
			continue;
		src->tx_frames++;
		loop_link_send(&loop.link, src->index, dst->index, out[i], loop_now());
	}
}

static void loop_transmit(struct loop_host *src, struct io_pkt *frame)
{
	uint8_t dmac[6];
	uint16_t i;
	if (io_pkt_copy_out(frame, 0, dmac, 6) != 6) {
		src->tx_drop_error++;
		return;
	}
	if (dmac[0] & 1) { /* broadcast or multicast: everybody else */
		for (i = 0; i < loop.conf.nhosts; i++)
			if (i != src->index)
				loop_transmit_to(src, &loop.hosts[i], frame);
		return;
	}
	for (i = 0; i < loop.conf.nhosts; i++) {
		if (!memcmp(loop.hosts[i].mac, dmac, 6)) {
			loop_transmit_to(src, &loop.hosts[i], frame);
			return;
		}
	}
	src->tx_drop_unknown_dst++;
}

static void iip_ops_l2_flush(void *opaque)
{
	struct loop_host *h = loop_host_of(opaque);
	uint32_t i;
	for (i = 0; i < h->ntx; i++) {
		loop_transmit(h, h->tx[i]);
		io_pkt_free(h->tx[i]); /* wire copies were made; the stack keeps its clones */
	}
	h->ntx = 0;
}

static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct loop_host *h = loop_host_of(opaque);
	if (h->ntx == loop.conf.batch)
		iip_ops_l2_flush(opaque);
	h->tx[h->ntx++] = (struct io_pkt *) pkt;
}

/* ---- receive ------------------------------------------------------------------- */

static void loop_deliver(void *ctx, uint16_t dst, struct io_pkt *pkt)
{
	struct loop_host *h = &loop.hosts[dst];
	(void) ctx;
	if (h->nrx == loop.conf.batch) { /* rx ring full: a NIC drops */
		h->rx_drop_full++;
		io_pkt_free(pkt);
		return;
	}
	if (loop.conf.features & LOOP_F_CSUM)
		io_pkt_rx_verify_checksums(pkt);
	else
		pkt->flags &= ~IO_PKT_F_RX_MASK;
	h->rx[h->nrx++] = pkt;
	h->rx_frames++;
}

/* ---- options ------------------------------------------------------------------ */

static void loop_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [loop options] -- [app options, host 1] -- [app options, host 2] ...\n"
		"  each \"--\" section is one host (10.0.0.N, MAC 02:00:00:00:00:NN)\n"
		"loop options:\n"
		"  -n HOSTS   number of hosts (default: number of sections, at least 1)\n"
		"  -a IP      address of the next host (repeatable; default 10.0.0.N)\n"
		"  -L P       loss probability (0..1)      -U P  duplicate probability\n"
		"  -O P       reorder probability          -C P  corrupt probability\n"
		"  -R US      longest hold of a reordered frame (default 1000 us)\n"
		"  -D US      one-way delay in microseconds (default 0)\n"
		"  -B MBPS    bandwidth in Mb/s per host (serialisation delay; default 0 = infinite)\n"
		"  -S SEED    seed of the fault PRNG and, with -V, of the ISN secrets (default 1)\n"
		"  -V         virtual clock: deterministic, as fast as the CPU allows\n"
		"  -T SEC     hard stop after SEC seconds (virtual seconds with -V)\n"
		"  -w FILE    write every frame on the wire to FILE (pcap)   -N  nanosecond pcap\n"
		"  -F LIST    NIC features: comma list of sg,tso,csum,lro, or none (default none)\n"
		"  -m MTU     IP MTU, 68..65000 (default 1500)\n"
		"  -b N       packet buffers per host (default 8192)   -g N  64 KiB buffers (default 64)\n"
		"  -c N       TCP connections per host (default 2048)  -p N  stack pb objects (default 16384)\n"
		"  -q N       rx ring and tx batch size per host (default 4096; a full ring drops)\n"
		"  -h         this help\n",
		prog);
}

static int loop_parse_prob(const char *s, double *out)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0 && v <= 1.0))
		return -1;
	*out = v;
	return 0;
}

static int loop_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (*s == '-' || *s == '\0')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static const struct io_args_flag loop_feature_names[] = {
	{ "sg", LOOP_F_SG },
	{ "tso", LOOP_F_TSO },
	{ "csum", LOOP_F_CSUM },
	{ "lro", LOOP_F_LRO },
	{ NULL, 0 },
};

static int loop_bad_option(const char *prog, int opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: invalid -%c '%s': %s\n", prog, opt, arg ? arg : "", why);
	loop_usage(stderr, prog);
	return -1;
}

/* parses argv[1 .. n-1] (the part before the first "--") */
static int loop_parse_options(int n, char *const *argv, struct loop_conf *c)
{
	const char *prog = argv[0];
	uint64_t v;
	double d;
	int opt;
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->mtu = 1500;
	c->nbufs = 8192;
	c->nbig = 64;
	c->nconn = 2048;
	c->npb = 16384;
	c->batch = 4096;
	c->link.reorder_hold_ns = 1000000;
	optind = 1;
	opterr = 0;
	while ((opt = getopt(n, argv, ":n:a:L:U:O:C:R:D:B:S:VT:w:NF:m:b:g:c:p:q:h")) != -1) {
		switch (opt) {
		case 'n':
			if (loop_parse_u64(optarg, 1, LOOP_MAX_HOSTS, &v))
				return loop_bad_option(prog, opt, optarg, "1..64 hosts");
			c->nhosts = (uint16_t) v;
			break;
		case 'a': {
			struct in_addr a;
			if (c->nip == LOOP_MAX_HOSTS)
				return loop_bad_option(prog, opt, optarg, "too many addresses");
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return loop_bad_option(prog, opt, optarg, "not an IPv4 address");
			c->ip4_be[c->nip++] = a.s_addr;
			break;
		}
		case 'L': if (loop_parse_prob(optarg, &d)) return loop_bad_option(prog, opt, optarg, "probability 0..1"); c->link.loss = d; break;
		case 'U': if (loop_parse_prob(optarg, &d)) return loop_bad_option(prog, opt, optarg, "probability 0..1"); c->link.duplicate = d; break;
		case 'O': if (loop_parse_prob(optarg, &d)) return loop_bad_option(prog, opt, optarg, "probability 0..1"); c->link.reorder = d; break;
		case 'C': if (loop_parse_prob(optarg, &d)) return loop_bad_option(prog, opt, optarg, "probability 0..1"); c->link.corrupt = d; break;
		case 'R':
			if (loop_parse_u64(optarg, 0, 60000000, &v))
				return loop_bad_option(prog, opt, optarg, "microseconds, 0..60000000");
			c->link.reorder_hold_ns = v * 1000;
			break;
		case 'D':
			if (loop_parse_u64(optarg, 0, 60000000, &v))
				return loop_bad_option(prog, opt, optarg, "microseconds, 0..60000000");
			c->link.delay_ns = v * 1000;
			break;
		case 'B':
			if (loop_parse_u64(optarg, 0, 10000000, &v))
				return loop_bad_option(prog, opt, optarg, "Mb/s, 0..10000000");
			c->link.bandwidth_bps = v * 1000000;
			break;
		case 'S':
			if (loop_parse_u64(optarg, 0, UINT64_MAX, &v))
				return loop_bad_option(prog, opt, optarg, "an unsigned integer");
			c->seed = v;
			break;
		case 'V': c->virtual_clock = 1; break;
		case 'T': {
			char *end;
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(d > 0 && d < 1e7))
				return loop_bad_option(prog, opt, optarg, "seconds > 0");
			c->hard_stop_s = d;
			break;
		}
		case 'w': c->pcap_path = optarg; break;
		case 'N': c->pcap_nsec = 1; break;
		case 'F':
			if (io_args_flags(optarg, loop_feature_names, &c->features))
				return loop_bad_option(prog, opt, optarg, "comma list of sg,tso,csum,lro or none");
			break;
		case 'm':
			if (loop_parse_u64(optarg, 68, 65000, &v))
				return loop_bad_option(prog, opt, optarg, "68..65000");
			c->mtu = (uint16_t) v;
			break;
		case 'b': if (loop_parse_u64(optarg, 64, 1u << 24, &v)) return loop_bad_option(prog, opt, optarg, "64..16777216"); c->nbufs = (uint32_t) v; break;
		case 'g': if (loop_parse_u64(optarg, 0, 1u << 16, &v)) return loop_bad_option(prog, opt, optarg, "0..65536"); c->nbig = (uint32_t) v; break;
		case 'c': if (loop_parse_u64(optarg, 1, 1u << 22, &v)) return loop_bad_option(prog, opt, optarg, "1..4194304"); c->nconn = (uint32_t) v; break;
		case 'p': if (loop_parse_u64(optarg, 16, 1u << 24, &v)) return loop_bad_option(prog, opt, optarg, "16..16777216"); c->npb = (uint32_t) v; break;
		case 'q': if (loop_parse_u64(optarg, 1, 65535, &v)) return loop_bad_option(prog, opt, optarg, "1..65535 (iip_run takes a 16-bit count)"); c->batch = (uint32_t) v; break;
		case 'h': loop_usage(stdout, prog); exit(0);
		default: /* ':' or '?' */
			io_args_getopt_error(prog, opt);
			loop_usage(stderr, prog);
			return -1;
		}
	}
	if (io_args_no_operands(prog, n, argv)) {
		loop_usage(stderr, prog);
		return -1;
	}
	if ((c->features & LOOP_F_TSO) && !(c->features & LOOP_F_CSUM)) {
		fprintf(stderr, "%s: -F tso needs csum (a NIC that segments computes the checksums)\n", prog);
		return -1;
	}
	return 0;
}

/* ---- setup and teardown ---------------------------------------------------- */

static void loop_ip_str(uint32_t ip4_be, char *buf, size_t n)
{
	struct in_addr a;
	a.s_addr = ip4_be;
	inet_ntop(AF_INET, &a, buf, (socklen_t) n);
}

static void loop_features_str(uint32_t f, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s%s", (f & LOOP_F_SG) ? ",sg" : "", (f & LOOP_F_TSO) ? ",tso" : "",
		 (f & LOOP_F_CSUM) ? ",csum" : "", (f & LOOP_F_LRO) ? ",lro" : "");
	if (!buf[0])
		snprintf(buf, n, ",none");
}

static void loop_print_conf(const struct loop_conf *c)
{
	char ip[INET_ADDRSTRLEN], feat[32];
	uint16_t i;
	loop_features_str(c->features, feat, sizeof(feat));
	printf("loop: %u hosts (", c->nhosts);
	for (i = 0; i < c->nhosts; i++) {
		loop_ip_str(loop.hosts[i].ip4_be, ip, sizeof(ip));
		printf("%s%s", i ? " " : "", ip);
	}
	printf("), mtu %u, features %s, loss %g dup %g reorder %g (hold %llu us) corrupt %g, delay %llu us, bw ",
	       c->mtu, feat + 1, c->link.loss, c->link.duplicate, c->link.reorder,
	       (unsigned long long) (c->link.reorder_hold_ns / 1000), c->link.corrupt,
	       (unsigned long long) (c->link.delay_ns / 1000));
	if (c->link.bandwidth_bps)
		printf("%llu Mb/s", (unsigned long long) (c->link.bandwidth_bps / 1000000));
	else
		printf("infinite");
	printf(", seed %llu, %s clock, hard stop ", (unsigned long long) c->seed, c->virtual_clock ? "virtual" : "real");
	if (c->hard_stop_s > 0)
		printf("%gs", c->hard_stop_s);
	else
		printf("none");
	printf(", pcap %s, per host: %u bufs + %u big, %u conns, %u pbs, ring %u\n",
	       c->pcap_path ? c->pcap_path : "off", c->nbufs, c->nbig, c->nconn, c->npb, c->batch);
	fflush(stdout);
}

static int loop_host_setup(struct loop_host *h, uint16_t index)
{
	const struct loop_conf *c = &loop.conf;
	uint32_t bufsize = c->mtu + 14u + 64u;
	uint8_t key[16];
	h->index = index;
	h->mac[0] = 0x02;
	h->mac[5] = (uint8_t) (index + 1);
	h->ip4_be = index < c->nip ? c->ip4_be[index] : htonl(0x0a000000u + index + 1u);
	h->opaque[0] = h;
	if (bufsize < 2048)
		bufsize = 2048;
	if (io_pkt_pool_init(&h->pool, c->nbufs * 4u + c->nbig, c->nbufs, bufsize, c->nbig, 65536u + 128u)) {
		fprintf(stderr, "loop: host %u: cannot allocate its packet pool\n", index + 1);
		return -1;
	}
	h->tx = calloc(c->batch, sizeof(*h->tx));
	h->rx = calloc(c->batch, sizeof(*h->rx));
	if (io_stack_create(&h->workspace, &h->conns, c->nconn, &h->pbs, c->npb) || !h->tx || !h->rx) {
		fprintf(stderr, "loop: host %u: out of memory\n", index + 1);
		return -1;
	}
	iip_set_mtu(h->workspace, c->mtu);
	if (c->virtual_clock) { /* reproducible: derived from the seed */
		struct loop_rng r;
		uint64_t a, b;
		loop_rng_seed(&r, c->seed ^ (0x5ec12e7ull * (index + 1)));
		a = loop_rng_next(&r);
		b = loop_rng_next(&r);
		memcpy(key, &a, 8);
		memcpy(key + 8, &b, 8);
		iip_set_isn_secret(h->workspace, key);
		return 0;
	}
	return io_stack_random_isn_secret(h->workspace, "loop");
}

static void loop_host_teardown(struct loop_host *h)
{
	free(h->workspace);
	free(h->conns);
	free(h->pbs);
	free(h->tx);
	free(h->rx);
	free(h->argv);
	io_pkt_pool_destroy(&h->pool);
}

/* splits argv at each "--" into the loop's part and one part per host */
static int loop_split_sections(int argc, char *const *argv, int *loop_argc)
{
	int i, start, nsec = 0, k;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		;
	*loop_argc = i;
	/* count sections */
	for (k = i; k < argc; k++)
		if (!strcmp(argv[k], "--"))
			nsec++;
	if (!loop.conf.nhosts)
		loop.conf.nhosts = (uint16_t) (nsec ? nsec : 1);
	if (nsec > loop.conf.nhosts) {
		fprintf(stderr, "loop: %d app sections but -n %u hosts\n", nsec, loop.conf.nhosts);
		return -1;
	}
	if (nsec > LOOP_MAX_HOSTS) {
		fprintf(stderr, "loop: at most %d hosts\n", LOOP_MAX_HOSTS);
		return -1;
	}
	loop.hosts = calloc(loop.conf.nhosts, sizeof(*loop.hosts));
	if (!loop.hosts)
		return -1;
	for (k = 0; k < loop.conf.nhosts; k++) {
		struct loop_host *h = &loop.hosts[k];
		int n = 0;
		start = i + 1;
		if (i < argc) /* this host has a section: argv[start .. next "--") */
			for (i = start; i < argc && strcmp(argv[i], "--"); i++)
				n++;
		h->argv = calloc((size_t) n + 2, sizeof(char *));
		if (!h->argv)
			return -1;
		h->argv[0] = argv[0];
		if (n)
			memcpy(&h->argv[1], &argv[start], (size_t) n * sizeof(char *));
		h->argc = n + 1;
	}
	return 0;
}

/* ---- main loop -------------------------------------------------------------- */

/* runs one host's iteration; returns non-zero if it received or sent */
static int loop_host_iterate(struct loop_host *h, int force)
{
	uint32_t next_us = 1000000, nrx = h->nrx;
	uint64_t tx_before = h->tx_frames, now = loop_now();
	if (!force && !nrx && now < h->deadline_ns)
		return 0;
	h->nrx = 0;
	iip_run(h->workspace, h->mac, h->ip4_be, (void **) h->rx, (uint16_t) nrx, &next_us, h->opaque);
	__app_loop(h->workspace, h->mac, h->ip4_be, &next_us, h->opaque);
	iip_ops_l2_flush(h->opaque);
	h->deadline_ns = loop_now() + (uint64_t) next_us * 1000u;
	return nrx || h->tx_frames != tx_before;
}

static int loop_all_stopped(void)
{
	uint16_t i;
	for (i = 0; i < loop.conf.nhosts; i++)
		if (!__app_should_stop(loop.hosts[i].opaque))
			return 0;
	return 1;
}

/* the earliest thing that will happen: a host deadline or a frame due */
static uint64_t loop_next_event(void)
{
	uint64_t t = loop_link_next_due(&loop.link);
	uint16_t i;
	for (i = 0; i < loop.conf.nhosts; i++)
		if (loop.hosts[i].deadline_ns < t)
			t = loop.hosts[i].deadline_ns;
	return t;
}

static void loop_wait_until(uint64_t t)
{
	uint64_t now = loop_now();
	if (loop.conf.virtual_clock) {
		/* jump; at least 1 us so a host asking for "now" again cannot freeze time */
		loop.now_ns = t > now + 1000 ? t : now + 1000;
		return;
	}
	if (t > now + 100000) { /* sleep, but wake up in time and at least every 10 ms */
		uint64_t d = t - now - 50000;
		struct timespec ts;
		if (d > 10000000)
			d = 10000000;
		ts.tv_sec = 0;
		ts.tv_nsec = (long) d;
		nanosleep(&ts, NULL);
	} /* else spin: return and poll again */
}

static int loop_run(void)
{
	uint64_t stop_at = UINT64_MAX;
	int hard_stopped = 0;
	uint16_t i;
	if (loop.conf.hard_stop_s > 0)
		stop_at = loop_now() + (uint64_t) (loop.conf.hard_stop_s * 1e9);
	for (i = 0; i < loop.conf.nhosts; i++) /* everybody runs once at start */
		loop_host_iterate(&loop.hosts[i], 1);
	for (;;) {
		int busy = 0;
		if (loop_all_stopped())
			break;
		if (loop_now() >= stop_at) {
			hard_stopped = 1;
			break;
		}
		loop_link_poll(&loop.link, loop_now(), loop_deliver, NULL);
		for (i = 0; i < loop.conf.nhosts; i++)
			busy |= loop_host_iterate(&loop.hosts[i], 0);
		loop.rounds++;
		if (!busy) {
			uint64_t t = loop_next_event();
			loop_wait_until(t < stop_at ? t : stop_at);
		} else if (loop.conf.virtual_clock) {
			/* a busy round costs 1 us of virtual time, so that time (and
			 * with it timers and -T) advances even if hosts never idle */
			loop.now_ns += 1000;
		}
	}
	return hard_stopped;
}

static int __iosub_main(int argc, char *const *argv)
{
	int loop_argc, hard_stopped, rc = 0;
	uint32_t leaked = 0;
	uint16_t i;
	struct loop_link_counters *lc;

	IO_STACK_CALLS_MAY_GO_UNUSED();
	if (argc < 1)
		return 2;
	/* options of the loop: argv[0 .. first "--") */
	for (loop_argc = 1; loop_argc < argc && strcmp(argv[loop_argc], "--"); loop_argc++)
		;
	if (loop_parse_options(loop_argc, argv, &loop.conf))
		return 2;
	if (loop_split_sections(argc, argv, &loop_argc))
		return 2;
	if (loop.conf.nip > loop.conf.nhosts) {
		fprintf(stderr, "loop: %u addresses (-a) for %u hosts\n", loop.conf.nip, loop.conf.nhosts);
		return 2;
	}
#ifndef APP_IIP_OPS_UTIL_NOW_NS_NONE
	if (loop.conf.virtual_clock)
		fprintf(stderr, "loop: warning: the application has its own clock; -V runs are not virtual for it\n");
#endif
	if (loop.conf.virtual_clock) {
		loop.now_ns = 1000000000ull; /* t = 1 s: keeps 0 free as "never" */
		loop.pcap_epoch_ns = LOOP_VIRTUAL_EPOCH_S * 1000000000ull - loop.now_ns;
	} else {
		struct timespec wall;
		clock_gettime(CLOCK_REALTIME, &wall);
		loop.start_ns = loop_now();
		loop.pcap_epoch_ns = (uint64_t) wall.tv_sec * 1000000000ull + (uint64_t) wall.tv_nsec - loop.start_ns;
	}
	if (loop_link_init(&loop.link, loop.conf.nhosts, &loop.conf.link, loop.conf.seed)) {
		fprintf(stderr, "loop: out of memory\n");
		return 2;
	}
	if (loop.conf.pcap_path) {
		if (io_pcap_open(&loop.pcap, loop.conf.pcap_path, loop.conf.pcap_nsec)) {
			fprintf(stderr, "loop: cannot write %s: %s\n", loop.conf.pcap_path, strerror(errno));
			return 2;
		}
		loop.pcap_on = 1;
		loop.link.capture = loop_capture;
	}
	for (i = 0; i < loop.conf.nhosts; i++)
		if (loop_host_setup(&loop.hosts[i], i))
			return 2;
	loop_print_conf(&loop.conf);
	for (i = 0; i < loop.conf.nhosts; i++) {
		struct loop_host *h = &loop.hosts[i];
		io_args_reset_getopt();
		h->opaque[1] = __app_init(h->argc, h->argv);
		h->opaque[2] = __app_thread_init(h->workspace, i, h->opaque);
	}

	hard_stopped = loop_run();

	for (i = 0; i < loop.conf.nhosts; i++)
		__app_exit(loop.hosts[i].opaque[1]);
	/* what is still queued is returned to the pools before counting */
	for (i = 0; i < loop.conf.nhosts; i++) {
		struct loop_host *h = &loop.hosts[i];
		uint32_t k;
		for (k = 0; k < h->nrx; k++)
			io_pkt_free(h->rx[k]);
		for (k = 0; k < h->ntx; k++)
			io_pkt_free(h->tx[k]);
		h->nrx = h->ntx = 0;
	}
	loop_link_destroy(&loop.link);
	lc = &loop.link.c;
	printf("loop: %s after %.6f s (%s), %llu rounds\n", hard_stopped ? "hard stop (-T)" : "all hosts done",
	       (double) (loop_now() - (loop.conf.virtual_clock ? 1000000000ull : loop.start_ns)) / 1e9,
	       loop.conf.virtual_clock ? "virtual" : "real", (unsigned long long) loop.rounds);
	printf("loop: link: sent %llu delivered %llu dropped %llu duplicated %llu reordered %llu corrupted %llu "
	       "in-flight-at-exit %llu\n",
	       (unsigned long long) lc->sent, (unsigned long long) lc->delivered, (unsigned long long) lc->dropped,
	       (unsigned long long) lc->duplicated, (unsigned long long) lc->reordered,
	       (unsigned long long) lc->corrupted, (unsigned long long) lc->freed_at_exit);
	for (i = 0; i < loop.conf.nhosts; i++) {
		struct loop_host *h = &loop.hosts[i];
		char name[64];
		printf("loop: host %u: tx %llu rx %llu, dropped: oversize %llu unknown-dst %llu error %llu rx-full %llu; "
		       "offload: tso %llu frames, pseudo-header sum %llu ok %llu not\n",
		       i + 1, (unsigned long long) h->tx_frames, (unsigned long long) h->rx_frames,
		       (unsigned long long) h->tx_drop_oversize, (unsigned long long) h->tx_drop_unknown_dst,
		       (unsigned long long) h->tx_drop_error, (unsigned long long) h->rx_drop_full,
		       (unsigned long long) h->offload.tso_frames, (unsigned long long) h->offload.pseudo_ok,
		       (unsigned long long) h->offload.pseudo_mismatch);
		snprintf(name, sizeof(name), "loop: host %u", i + 1);
		leaked += io_pkt_pool_report(&h->pool, stdout, name);
	}
	if (loop.pcap_on && io_pcap_close(&loop.pcap)) {
		fprintf(stderr, "loop: error writing %s\n", loop.conf.pcap_path);
		rc = 1;
	}
	if (leaked && !hard_stopped) {
		printf("loop: leak check FAILED: %u packet objects not returned\n", leaked);
		rc = 3;
	} else if (leaked) {
		printf("loop: leak check skipped: hard stop with %u packet objects still held\n", leaked);
	} else {
		printf("loop: leak check ok: every packet returned\n");
	}
	for (i = 0; i < loop.conf.nhosts; i++)
		loop_host_teardown(&loop.hosts[i]);
	free(loop.hosts);
	fflush(stdout);
	return rc;
}
