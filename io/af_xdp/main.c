/*
 * io/af_xdp/main.c — the AF_XDP backend: the stack on a Linux network
 * interface, one AF_XDP socket and one UMEM per thread and NIC queue.
 *
 * Command line (COMPAT.md section 3, seed-003 shape):
 *   app -i IFNAME [-l CORES] [backend options] -- [app options]
 * Thread i runs on the i-th core of -l and serves receive/transmit queue i
 * of the interface; __app_thread_init gets the thread index i as core_id.
 * The MAC address, the IPv4 address and the MTU are the interface's.
 *
 * Per thread (see README.md for the why of each step):
 *   receive  RX ring -> packets over UMEM frames (umem.h); with several
 *            threads, frames of another thread's flows are copied over to
 *            it (steer.h); frames from other threads are taken in;
 *   run      iip_run with the batch, then __app_loop;
 *   transmit the pushed packets go to the TX ring from the frame they lie
 *            in (chains are copied into one frame first: we report no
 *            scatter-gather), then a sendto() kick when the kernel asks
 *            for one (always, in copy mode);
 *   recycle  completions free the transmitted packets, free frames refill
 *            the fill ring;
 *   wait     busy poll (-e 0) or poll() until a frame arrives, another
 *            thread hands one over, or the stack's next_us / -e is due.
 *
 * No checksum offload, no TSO: an AF_XDP socket passes frames as they are,
 * so the stack computes every checksum itself (all offload features 0).
 *
 * This file is included into the application's translation unit after the
 * stack; it needs libc, libxdp and libbpf (build.mk).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "../common/pkt.h"
#include "../common/pcap.h"
#include "../common/corelist.h"
#include "../common/args.h"
#include "../common/clock.h"
#include "../common/stack_setup.h"
#include "../common/rss.h"
#include "ifinfo.h"
#include "umem.h"
#include "steer.h"
#include "nic_rss.h"

#include "../common/app_contract.h"
#include "../common/nic_features.h"

#define AFX_MAX_THREADS 64
#define AFX_STEER_ALL 0xffffu        /* frame goes to every thread (ARP replies) */
#define AFX_STEER_SLOTS 1024u        /* frames per src->dst steering ring */
#define AFX_KICK_TRIES 64            /* sendto() calls per flush while the kernel says EAGAIN */

enum afx_attach_mode { AFX_ATTACH_AUTO, AFX_ATTACH_NATIVE, AFX_ATTACH_GENERIC };
enum afx_bind_mode { AFX_BIND_AUTO, AFX_BIND_ZEROCOPY, AFX_BIND_COPY };
enum afx_steer_mode { AFX_STEERING_SW, AFX_STEERING_NIC, AFX_STEERING_OFF };

struct afx_conf {
	const char *ifname;
	struct io_corelist cores;
	uint32_t poll_ms;            /* -e: longest sleep; 0 = busy poll */
	enum afx_attach_mode attach;
	enum afx_bind_mode bind;
	enum afx_steer_mode steering;
	uint32_t rx_size, tx_size;   /* rings (fill = 2 x rx, completion = tx) */
	uint32_t nframes, frame_size;
	uint32_t batch;              /* RX descriptors per iip_run */
	uint32_t nconn, npb;
	uint32_t ip4_override_be;
	const char *pcap_path;
	int pcap_nsec;
	int verbose;
};

struct afx_thread {
	uint16_t index, core, queue;
	struct afx_umem umem;
	struct io_pkt_pool pool;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	int fd;
	int zerocopy;
	struct afx_txq txq;          /* in the TX ring or awaiting completion */
	struct io_pkt **pending;     /* pushed by the stack, not yet in the TX ring */
	uint32_t npending, pending_cap;
	struct io_pkt **rxbatch;
	uint32_t nrx;
	struct afx_waker waker;
	void *workspace, *conns, *pbs;
	void *opaque[3];             /* [0] this thread, [1] app global, [2] app thread */
	pthread_t tid;
	int started, failed;
	/* counters */
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes, iterations, sleeps;
	uint64_t tx_linearized, tx_drop_oversize, tx_drop_nobuf, tx_drop_full, kick_errors;
	uint64_t steer_out, steer_in, steer_in_nobuf, fill_starved;
};

struct afx_state {
	struct afx_conf conf;
	struct afx_ifinfo ifi;
	uint32_t ip4_be;
	uint16_t nthreads;
	struct afx_thread *threads;
	struct afx_steer_ring *steer;  /* [src * nthreads + dst] */
	struct io_rss rss;
	struct afx_nic_rss nic_rss;    /* -S nic */
	uint32_t xdp_flags;            /* the attach mode that worked */
	const char *mode_name;
	struct io_pcap pcap;
	int pcap_on;
	pthread_mutex_t pcap_lock;
	uint64_t pcap_epoch_ns;
	atomic_int stop;               /* SIGINT / SIGTERM */
};

static struct afx_state afx;

#define IO_PKT_POOL_OF(opaque) (&((struct afx_thread *) ((void **) (opaque))[0])->pool)
#include "../common/pkt_ops.h"
#include "../common/eth_ops.h"

static struct afx_thread *afx_thread_of(void *opaque)
{
	return (struct afx_thread *) ((void **) opaque)[0];
}

/* ---- NIC features: AF_XDP passes frames as they are ------------------------- */

static uint32_t io_nic_features(void *opaque)
{
	(void) opaque;
	return 0;
}

/* the XDP program hands us everything the interface receives: skip unicast
 * frames for another MAC (a promiscuous or bridged port sees those) */
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque)
{
	(void) opaque;
	return io_eth_not_for((const struct io_pkt *) pkt, afx.ifi.mac);
}

/* ---- flow affinity and software steering ------------------------------------ */

/*
 * The thread whose queue receives the flow's packets. One thread: 0. Several
 * threads with software steering (the default; see steer.h for why veth
 * needs it): the Toeplitz-RSS queue of the peer -> local 4-tuple, exactly the
 * queue the receive path steers those frames to. -S nic: the queue the NIC's
 * own RSS picks (its key, table and hashed fields, read from the driver).
 * Steering off: unknown.
 */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	(void) opaque;
	if (afx.nthreads <= 1)
		return 0;
	if (afx.conf.steering == AFX_STEERING_OFF)
		return UINT16_MAX;
	if (afx.conf.steering == AFX_STEERING_NIC)
		return afx_nic_rss_queue(&afx.nic_rss, protocol, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be);
	return io_rss_queue_for_flow(protocol, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be, &afx.rss);
}

/* which thread handles a received frame: RSS for IPv4 (ICMP, fragments and
 * other protocols -> thread 0, as io_rss_queue_for_frame says), ARP replies
 * to every thread (each thread's application may be waiting for one), other
 * ARP on the thread that got it */
static uint16_t afx_steer_target(const struct afx_thread *t, const uint8_t *frame, uint32_t len)
{
	if (len >= 22 && frame[12] == 0x08 && frame[13] == 0x06)
		return (frame[20] == 0 && frame[21] == 2) ? AFX_STEER_ALL : t->index;
	return io_rss_queue_for_frame(&afx.rss, frame, len);
}

static struct afx_steer_ring *afx_steer_ring(uint16_t src, uint16_t dst)
{
	return &afx.steer[(size_t) src * afx.nthreads + dst];
}

static void afx_steer_to(struct afx_thread *t, uint16_t dst, const struct io_pkt *pkt)
{
	if (afx_steer_push(afx_steer_ring(t->index, dst), pkt->data, pkt->len) == 0) {
		t->steer_out++;
		afx_waker_kick(&afx.threads[dst].waker);
	}
}

/* frames other threads handed over: copied into frames of our UMEM */
static void afx_steer_take(struct afx_thread *t)
{
	uint16_t src;
	for (src = 0; src < afx.nthreads; src++) {
		struct afx_steer_ring *r;
		const uint8_t *frame;
		uint32_t len;
		if (src == t->index)
			continue;
		r = afx_steer_ring(src, t->index);
		while (t->nrx < afx.conf.batch && (frame = afx_steer_peek(r, &len)) != NULL) {
			struct io_pkt *p = io_pkt_alloc(&t->pool);
			if (!p || len > io_pkt_room(p)) {
				if (p)
					io_pkt_free(p);
				t->steer_in_nobuf++;
			} else {
				memcpy(p->data, frame, len);
				p->len = (uint16_t) len;
				t->rxbatch[t->nrx++] = p;
				t->steer_in++;
			}
			afx_steer_pop_done(r);
		}
	}
}

/* ---- pcap ------------------------------------------------------------------- */

static void afx_capture(const struct io_pkt *pkt)
{
	const struct io_pkt *s;
	if (!afx.pcap_on)
		return;
	pthread_mutex_lock(&afx.pcap_lock);
	io_pcap_begin(&afx.pcap, afx.pcap_epoch_ns + io_clock_now_ns(), io_pkt_total_len(pkt));
	for (s = pkt; s; s = s->next)
		io_pcap_append(&afx.pcap, s->data, s->len);
	io_pcap_end(&afx.pcap);
	pthread_mutex_unlock(&afx.pcap_lock);
}

/* ---- receive ------------------------------------------------------------------ */

static void afx_receive(struct afx_thread *t)
{
	uint32_t idx = 0, n, i, room = afx.conf.batch - t->nrx;
	n = room ? xsk_ring_cons__peek(&t->rx, room, &idx) : 0;
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&t->rx, idx + i);
		struct io_pkt *p = afx_umem_rx_packet(&t->umem, &t->pool, d->addr, d->len);
		uint16_t target;
		if (!p)
			continue;
		t->rx_frames++;
		t->rx_bytes += p->len;
		afx_capture(p);
		target = afx.nthreads > 1 && afx.conf.steering == AFX_STEERING_SW
			 ? afx_steer_target(t, p->data, p->len) : t->index;
		if (target == t->index) {
			t->rxbatch[t->nrx++] = p;
			continue;
		}
		if (target == AFX_STEER_ALL) {
			uint16_t k;
			for (k = 0; k < afx.nthreads; k++)
				if (k != t->index)
					afx_steer_to(t, k, p);
			t->rxbatch[t->nrx++] = p;
			continue;
		}
		afx_steer_to(t, target, p);
		io_pkt_free(p); /* the bytes were copied: the frame is ours again */
	}
	if (n)
		xsk_ring_cons__release(&t->rx, n);
}

/* ---- transmit ------------------------------------------------------------------ */

/* asks the kernel to send what is in the TX ring. Copy mode transmits in
 * sendto() itself, at most 32 frames per call (EAGAIN: more left), so we
 * call again while it makes progress. Returns -1 when the kernel refuses
 * for good (e.g. the interface went down): no point spinning on it. */
static int afx_kick_tx(struct afx_thread *t)
{
	int i;
	if (!xsk_ring_prod__needs_wakeup(&t->tx))
		return 0;
	for (i = 0; i < AFX_KICK_TRIES; i++) {
		if (sendto(t->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return 0;
		if (errno == EAGAIN || errno == EINTR)
			continue; /* more to send */
		if (errno == EBUSY || errno == ENOBUFS) { /* the completion ring needs reaping */
			afx_umem_reap_completions(&t->umem, &t->txq);
			continue;
		}
		t->kick_errors++;
		return -1;
	}
	return 0;
}

/* a packet that can go to the TX ring as it lies: one segment in our UMEM */
static struct io_pkt *afx_tx_prepare(struct afx_thread *t, struct io_pkt *pkt)
{
	uint32_t max = afx.ifi.mtu + 14u;
	if (pkt->next || pkt->buf_pool != &t->pool) {
		struct io_pkt *lin = io_pkt_linearize(&t->pool, pkt);
		if (!lin) {
			if (io_pkt_total_len(pkt) > max)
				t->tx_drop_oversize++;
			else
				t->tx_drop_nobuf++;
			io_pkt_free(pkt);
			return NULL;
		}
		io_pkt_free(pkt);
		pkt = lin;
		t->tx_linearized++;
	}
	if (pkt->len > max || pkt->len < 14) { /* the NIC would refuse it */
		t->tx_drop_oversize++;
		io_pkt_free(pkt);
		return NULL;
	}
	return pkt;
}

static void afx_transmit(struct afx_thread *t)
{
	uint32_t i, n, idx = 0, space, k = 0;
	if (!t->npending)
		return;
	afx_umem_reap_completions(&t->umem, &t->txq);
	/* chains and foreign buffers become single frames of our UMEM */
	for (i = 0; i < t->npending; i++) {
		struct io_pkt *p = afx_tx_prepare(t, t->pending[i]);
		if (p)
			t->pending[k++] = p;
	}
	t->npending = k;
	space = (t->txq.mask + 1) - afx_txq_count(&t->txq);
	n = t->npending < space ? t->npending : space;
	if (n) { /* reserve is all-or-nothing: ask for what the ring has room for */
		uint32_t room = xsk_prod_nb_free(&t->tx, n);
		n = xsk_ring_prod__reserve(&t->tx, n < room ? n : room, &idx);
	}
	for (i = 0; i < n; i++) {
		struct io_pkt *p = t->pending[i];
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&t->tx, idx + i);
		d->addr = (uint64_t) (p->data - t->umem.area);
		d->len = p->len;
		d->options = 0;
		afx_txq_add(&t->txq, p);
		t->tx_frames++;
		t->tx_bytes += p->len;
		afx_capture(p);
	}
	if (n) {
		xsk_ring_prod__submit(&t->tx, n);
		memmove(t->pending, t->pending + n, (size_t) (t->npending - n) * sizeof(*t->pending));
		t->npending -= n;
	}
	afx_kick_tx(t);
}

static void iip_ops_l2_flush(void *opaque)
{
	afx_transmit(afx_thread_of(opaque));
}

/* the stack hands over a frame; it leaves at the next flush */
static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct afx_thread *t = afx_thread_of(opaque);
	if (t->npending == t->pending_cap)
		afx_transmit(t);
	if (t->npending == t->pending_cap) { /* TX ring and completions stuck: drop */
		t->tx_drop_full++;
		io_pkt_free((struct io_pkt *) pkt);
		return;
	}
	t->pending[t->npending++] = (struct io_pkt *) pkt;
}

/* ---- options ------------------------------------------------------------------ */

static void afx_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -i IFNAME [-l CORES] [af_xdp options] -- [app options]\n"
		"  -i IF      network interface; the stack takes its MAC, IPv4 address and MTU\n"
		"  -l CORES   cores, DPDK -l syntax (default 0): thread i runs on the i-th core and\n"
		"             serves queue i; the interface needs at least as many queues\n"
		"  -e MS      longest sleep in poll() when idle, in ms (default 10); 0 = busy poll\n"
		"  -M MODE    XDP attach mode: auto (native, then generic), native, generic (default auto)\n"
		"  -Z MODE    socket bind: auto (zero-copy, then copy), zc, copy (default auto)\n"
		"  -r N       RX ring descriptors, power of 2 (default 2048; the fill ring gets 2 x N)\n"
		"  -t N       TX ring descriptors, power of 2 (default 2048; so does the completion ring)\n"
		"  -n N       UMEM frames per thread (default 16384)\n"
		"  -f SIZE    frame size: 2048 or 4096 (default 2048)\n"
		"  -b N       RX descriptors per iip_run batch (default 256)\n"
		"  -S MODE    with several threads: sw = steer flows to threads in software by\n"
		"             Toeplitz RSS (default); nic = trust the NIC's hardware RSS (key and\n"
		"             table read from the driver); off = no steering, affinity unknown\n"
		"  -a IP      use this IPv4 address instead of the interface's\n"
		"  -c N       TCP connections per thread (default 4096)   -p N  stack pb objects (default 65536)\n"
		"  -w FILE    write every frame received and sent to FILE (pcap)   -N  nanosecond pcap\n"
		"  -v         print the setup steps\n"
		"  -h         this help\n",
		prog);
}

static int afx_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int afx_bad_option(const char *prog, int opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: af_xdp: invalid -%c '%s': %s\n", prog, opt, arg ? arg : "", why);
	return -1;
}

/* argv[1 .. n-1]: the part before "--" */
static int afx_parse_options(int n, char *const *argv, struct afx_conf *c)
{
	const char *prog = argv[0];
	char err[256];
	int opt;
	memset(c, 0, sizeof(*c));
	c->poll_ms = 10;
	c->rx_size = c->tx_size = 2048;
	c->nframes = 16384;
	c->frame_size = 2048;
	c->batch = 256;
	c->nconn = 4096;
	c->npb = 65536;
	c->cores.count = 1;
	c->cores.cores[0] = 0;
	optind = 1;
	opterr = 0;
	while ((opt = getopt(n, argv, ":i:l:e:M:Z:r:t:n:f:b:S:a:c:p:w:Nvh")) != -1) {
		switch (opt) {
		case 'i': c->ifname = optarg; break;
		case 'l':
			if (io_corelist_parse(optarg, &c->cores, err, sizeof(err)))
				return afx_bad_option(prog, opt, optarg, err);
			if (c->cores.count > AFX_MAX_THREADS)
				return afx_bad_option(prog, opt, optarg, "at most 64 cores");
			break;
		case 'e':
			if (io_args_u32(optarg, 0, 60000, &c->poll_ms))
				return afx_bad_option(prog, opt, optarg, "milliseconds, 0..60000");
			break;
		case 'M':
			if (!strcmp(optarg, "auto")) c->attach = AFX_ATTACH_AUTO;
			else if (!strcmp(optarg, "native") || !strcmp(optarg, "drv")) c->attach = AFX_ATTACH_NATIVE;
			else if (!strcmp(optarg, "generic") || !strcmp(optarg, "skb")) c->attach = AFX_ATTACH_GENERIC;
			else return afx_bad_option(prog, opt, optarg, "auto, native or generic");
			break;
		case 'Z':
			if (!strcmp(optarg, "auto")) c->bind = AFX_BIND_AUTO;
			else if (!strcmp(optarg, "zc") || !strcmp(optarg, "zerocopy")) c->bind = AFX_BIND_ZEROCOPY;
			else if (!strcmp(optarg, "copy")) c->bind = AFX_BIND_COPY;
			else return afx_bad_option(prog, opt, optarg, "auto, zc or copy");
			break;
		case 'r':
			if (io_args_u32(optarg, 64, 32768, &c->rx_size) || !afx_is_pow2(c->rx_size))
				return afx_bad_option(prog, opt, optarg, "a power of 2, 64..32768");
			break;
		case 't':
			if (io_args_u32(optarg, 64, 32768, &c->tx_size) || !afx_is_pow2(c->tx_size))
				return afx_bad_option(prog, opt, optarg, "a power of 2, 64..32768");
			break;
		case 'n':
			if (io_args_u32(optarg, 1024, 1u << 22, &c->nframes))
				return afx_bad_option(prog, opt, optarg, "1024..4194304");
			break;
		case 'f':
			if (io_args_u32(optarg, 2048, 4096, &c->frame_size) || !afx_is_pow2(c->frame_size))
				return afx_bad_option(prog, opt, optarg, "2048 or 4096");
			break;
		case 'b':
			if (io_args_u32(optarg, 1, 4096, &c->batch))
				return afx_bad_option(prog, opt, optarg, "1..4096");
			break;
		case 'S':
			if (!strcmp(optarg, "sw")) c->steering = AFX_STEERING_SW;
			else if (!strcmp(optarg, "nic")) c->steering = AFX_STEERING_NIC;
			else if (!strcmp(optarg, "off")) c->steering = AFX_STEERING_OFF;
			else return afx_bad_option(prog, opt, optarg, "sw, nic or off");
			break;
		case 'a': {
			struct in_addr a;
			if (inet_pton(AF_INET, optarg, &a) != 1 || a.s_addr == 0)
				return afx_bad_option(prog, opt, optarg, "not an IPv4 address");
			c->ip4_override_be = a.s_addr;
			break;
		}
		case 'c':
			if (io_args_u32(optarg, 1, 1u << 22, &c->nconn))
				return afx_bad_option(prog, opt, optarg, "1..4194304");
			break;
		case 'p':
			if (io_args_u32(optarg, 64, 1u << 24, &c->npb))
				return afx_bad_option(prog, opt, optarg, "64..16777216");
			break;
		case 'w': c->pcap_path = optarg; break;
		case 'N': c->pcap_nsec = 1; break;
		case 'v': c->verbose = 1; break;
		case 'h': afx_usage(stdout, prog); exit(0);
		case ':':
			fprintf(stderr, "%s: af_xdp: option -%c needs a value\n", prog, optopt);
			return -1;
		default:
			fprintf(stderr, "%s: af_xdp: unknown option -%c\n", prog, optopt);
			return -1;
		}
	}
	if (optind < n) {
		fprintf(stderr, "%s: af_xdp: unexpected argument '%s' before \"--\"\n", prog, argv[optind]);
		return -1;
	}
	if (!c->ifname) {
		fprintf(stderr, "%s: af_xdp: -i IFNAME is required\n", prog);
		return -1;
	}
	if (c->attach == AFX_ATTACH_GENERIC && c->bind == AFX_BIND_ZEROCOPY) {
		fprintf(stderr, "%s: af_xdp: -M generic cannot be zero-copy (-Z zc): generic XDP always copies\n", prog);
		return -1;
	}
	if (c->nframes < 2 * c->rx_size + 2 * c->tx_size + 512) {
		fprintf(stderr, "%s: af_xdp: -n %u frames is too few for the rings: need at least 2 x rx + 2 x tx + 512 = %u\n",
			prog, c->nframes, 2 * c->rx_size + 2 * c->tx_size + 512);
		return -1;
	}
	return 0;
}

/* ---- sockets ------------------------------------------------------------------ */

/*
 * libbpf and libxdp talk a lot (e.g. "No bpffs found", which only means
 * libxdp falls back to loading its program without the multi-program
 * dispatcher), but when an attach fails their last words hold the kernel's
 * reason ("Kernel error message: ..."). So their messages are kept, not
 * printed, and shown when an attempt fails (all of them with -v).
 */
static char afx_lib_log[2048];
static size_t afx_lib_log_len;

static int afx_lib_vlog(const char *who, const char *fmt, va_list ap)
{
	char line[512];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return n;
	if (afx.conf.verbose)
		fprintf(stderr, "af_xdp: %s: %s", who, line);
	if (afx_lib_log_len + strlen(line) + 1 < sizeof(afx_lib_log)) {
		memcpy(afx_lib_log + afx_lib_log_len, line, strlen(line) + 1);
		afx_lib_log_len += strlen(line);
	}
	return n;
}

static int afx_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !afx.conf.verbose)
		return 0;
	return afx_lib_vlog("libbpf", fmt, ap);
}

static int afx_libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_WARN && !afx.conf.verbose)
		return 0;
	return afx_lib_vlog("libxdp", fmt, ap);
}

static void afx_lib_log_clear(void)
{
	afx_lib_log_len = 0;
	afx_lib_log[0] = '\0';
}

/* the kept library messages, indented, after a failure */
static void afx_lib_log_show(void)
{
	const char *p = afx_lib_log;
	if (afx.conf.verbose || !afx_lib_log_len)
		return;
	fprintf(stderr, "af_xdp:   libxdp/libbpf said:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int) (nl - p) : (int) strlen(p);
		fprintf(stderr, "af_xdp:     %.*s\n", n, p);
		p += n + (nl ? 1 : 0);
	}
}

struct afx_attempt {
	uint32_t xdp_flags;
	uint16_t bind_flags;
	const char *name;
};

/*
 * Creates thread t's UMEM and socket with one (attach mode, bind mode)
 * combination; on failure everything is undone (a socket that failed to bind
 * cannot be bound again, and libxdp keeps the UMEM's rings on it), so the
 * next attempt starts afresh. Returns 0 or -errno.
 */
static int afx_try_socket(struct afx_thread *t, const struct afx_attempt *a)
{
	const struct afx_conf *c = &afx.conf;
	struct xsk_socket_config cfg;
	int rc;
	rc = afx_umem_create(&t->umem, c->nframes, c->frame_size, 2 * c->rx_size, c->tx_size);
	if (rc)
		return rc;
	memset(&cfg, 0, sizeof(cfg));
	cfg.rx_size = c->rx_size;
	cfg.tx_size = c->tx_size;
	cfg.libxdp_flags = 0;          /* libxdp loads its default program (redirect to the XSKMAP) */
	cfg.xdp_flags = a->xdp_flags;
	cfg.bind_flags = (uint16_t) (a->bind_flags | XDP_USE_NEED_WAKEUP);
	rc = xsk_socket__create(&t->xsk, afx.ifi.name, t->queue, t->umem.umem, &t->rx, &t->tx, &cfg);
	if (rc) {
		t->xsk = NULL;
		afx_umem_destroy(&t->umem);
		return rc < 0 ? rc : -rc;
	}
	t->fd = xsk_socket__fd(t->xsk);
	return 0;
}

static int afx_socket_is_zerocopy(int fd)
{
	struct xdp_options o;
	socklen_t len = sizeof(o);
	memset(&o, 0, sizeof(o));
	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &o, &len) != 0)
		return 0;
	return (o.flags & XDP_OPTIONS_ZEROCOPY) ? 1 : 0;
}

/*
 * Thread 0 finds the first combination that works, in the order
 * native+zero-copy, native+copy, generic+copy (restricted by -M/-Z), and
 * says why each one before it failed; the other threads then use the same
 * attach mode (one XDP program per interface) and the same bind fallback.
 */
static int afx_open_sockets(void)
{
	static const struct afx_attempt all[] = {
		{ XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, "native mode, zero-copy" },
		{ XDP_FLAGS_DRV_MODE, XDP_COPY, "native mode, copy" },
		{ XDP_FLAGS_SKB_MODE, XDP_COPY, "generic (SKB) mode, copy" },
	};
	struct afx_attempt ok = { 0, 0, NULL };
	uint16_t i;
	size_t k;
	int rc = 0;
	for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
		const struct afx_attempt *a = &all[k];
		struct afx_thread *t = &afx.threads[0];
		if ((afx.conf.attach == AFX_ATTACH_NATIVE && a->xdp_flags != XDP_FLAGS_DRV_MODE) ||
		    (afx.conf.attach == AFX_ATTACH_GENERIC && a->xdp_flags != XDP_FLAGS_SKB_MODE) ||
		    (afx.conf.bind == AFX_BIND_ZEROCOPY && a->bind_flags != XDP_ZEROCOPY) ||
		    (afx.conf.bind == AFX_BIND_COPY && a->bind_flags != XDP_COPY))
			continue;
		afx_lib_log_clear();
		rc = afx_try_socket(t, a);
		if (!rc) {
			ok = *a;
			break;
		}
		fprintf(stderr, "af_xdp: %s queue %u: %s failed: %s%s\n", afx.ifi.name, t->queue, a->name,
			strerror(-rc),
			rc == -EOPNOTSUPP && a->bind_flags == XDP_ZEROCOPY ? " (the driver offers no zero-copy; "
									     "falling back)" :
			rc == -EPERM ? " (needs root: CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF)" : "");
		if (!(rc == -EOPNOTSUPP && a->bind_flags == XDP_ZEROCOPY))
			afx_lib_log_show();
	}
	if (!ok.name) {
		fprintf(stderr, "af_xdp: %s: cannot open an AF_XDP socket in any allowed mode (-M/-Z); last error: %s\n",
			afx.ifi.name, strerror(-rc));
		return -1;
	}
	afx.xdp_flags = ok.xdp_flags;
	afx.mode_name = ok.xdp_flags == XDP_FLAGS_DRV_MODE ? "native" : "generic";
	afx.threads[0].zerocopy = afx_socket_is_zerocopy(afx.threads[0].fd);
	for (i = 1; i < afx.nthreads; i++) {
		struct afx_thread *t = &afx.threads[i];
		struct afx_attempt a = ok;
		afx_lib_log_clear();
		rc = afx_try_socket(t, &a);
		if (rc && a.bind_flags == XDP_ZEROCOPY && afx.conf.bind == AFX_BIND_AUTO) {
			a.bind_flags = XDP_COPY;
			rc = afx_try_socket(t, &a);
		}
		if (rc) {
			fprintf(stderr, "af_xdp: %s queue %u: %s failed: %s\n", afx.ifi.name, t->queue, ok.name, strerror(-rc));
			afx_lib_log_show();
			return -1;
		}
		t->zerocopy = afx_socket_is_zerocopy(t->fd);
	}
	return 0;
}

/* ---- setup and teardown ---------------------------------------------------- */

static uint32_t afx_pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

static int afx_thread_setup(struct afx_thread *t, uint16_t index)
{
	const struct afx_conf *c = &afx.conf;
	t->index = index;
	t->core = c->cores.cores[index];
	t->queue = index;
	t->opaque[0] = t;
	t->pending_cap = 2 * c->tx_size;
	t->pending = calloc(t->pending_cap, sizeof(*t->pending));
	t->rxbatch = calloc(c->batch, sizeof(*t->rxbatch));
	if (!t->pending || !t->rxbatch || io_stack_create(&t->workspace, &t->conns, c->nconn, &t->pbs, c->npb) ||
	    afx_txq_init(&t->txq, afx_pow2_at_least(2 * c->tx_size)) || afx_waker_init(&t->waker)) {
		fprintf(stderr, "af_xdp: thread %u: out of memory\n", index);
		return -1;
	}
	iip_set_mtu(t->workspace, (uint16_t) afx.ifi.mtu);
	return io_stack_random_isn_secret(t->workspace, "af_xdp");
}

/* after the socket is open: the frame pool over its UMEM, and the fill ring */
static int afx_thread_attach_pool(struct afx_thread *t)
{
	const struct afx_conf *c = &afx.conf;
	if (afx_pool_init(&t->pool, &t->umem, c->nframes * 2u)) {
		fprintf(stderr, "af_xdp: thread %u: out of memory\n", t->index);
		return -1;
	}
	/* the fill ring gets at most fill_size frames; the rest are for the
	 * stack's transmissions and for what it keeps (unacknowledged data,
	 * out-of-order segments) */
	t->umem.keep_free = c->nframes - t->umem.fill_size;
	if (t->umem.keep_free > c->nframes / 2)
		t->umem.keep_free = c->nframes / 2;
	afx_umem_refill(&t->umem, &t->pool);
	return 0;
}

static void afx_thread_teardown(struct afx_thread *t)
{
	uint32_t k;
	for (k = 0; k < t->nrx; k++)
		io_pkt_free(t->rxbatch[k]);
	for (k = 0; k < t->npending; k++)
		io_pkt_free(t->pending[k]);
	t->nrx = t->npending = 0;
	if (t->xsk) {
		afx_umem_reap_completions(&t->umem, &t->txq);
		xsk_socket__delete(t->xsk);
		t->xsk = NULL;
	}
	afx_txq_drain(&t->txq);
	if (t->pool.descs)
		afx_pool_destroy(&t->pool);
	afx_umem_destroy(&t->umem);
	if (t->waker.efd >= 0)
		close(t->waker.efd);
	free(t->txq.pkt);
	free(t->pending);
	free(t->rxbatch);
	free(t->workspace);
	free(t->conns);
	free(t->pbs);
}

/* ---- the per-thread loop ------------------------------------------------------ */

static int afx_steer_inbox_empty(const struct afx_thread *t)
{
	uint16_t src;
	if (afx.nthreads < 2)
		return 1;
	for (src = 0; src < afx.nthreads; src++)
		if (src != t->index && !afx_steer_ring_empty(afx_steer_ring(src, t->index)))
			return 0;
	return 1;
}

/* sleeps until a frame arrives, another thread hands one over, or timeout_us */
static void afx_wait(struct afx_thread *t, uint64_t timeout_us)
{
	struct pollfd pfd[2];
	struct timespec ts;
	if (!timeout_us)
		return;
	atomic_store(&t->waker.sleeping, 1);
	if (!afx_steer_inbox_empty(t) || atomic_load(&afx.stop)) {
		atomic_store(&t->waker.sleeping, 0);
		return;
	}
	pfd[0].fd = t->fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = t->waker.efd;
	pfd[1].events = POLLIN;
	ts.tv_sec = (time_t) (timeout_us / 1000000u);
	ts.tv_nsec = (long) (timeout_us % 1000000u) * 1000;
	t->sleeps++;
	if (ppoll(pfd, 2, &ts, NULL) > 0 && (pfd[1].revents & POLLIN))
		afx_waker_clear(&t->waker);
	atomic_store(&t->waker.sleeping, 0);
}

/* descriptors in the TX ring the kernel has not taken yet */
static int afx_tx_unsent(struct afx_thread *t)
{
	return xsk_prod_nb_free(&t->tx, afx.conf.tx_size) < afx.conf.tx_size;
}

static void *afx_thread_main(void *arg)
{
	struct afx_thread *t = arg;
	uint64_t poll_cap_us = (uint64_t) afx.conf.poll_ms * 1000u;
	t->opaque[2] = __app_thread_init(t->workspace, t->index, t->opaque);
	while (!atomic_load(&afx.stop) && !__app_should_stop(t->opaque)) {
		uint32_t next_us = 1000000, nrx;
		uint64_t wait_us;
		afx_umem_reap_completions(&t->umem, &t->txq);
		if (!afx_umem_refill(&t->umem, &t->pool) && t->umem.in_kernel == 0)
			t->fill_starved++;
		if (xsk_ring_prod__needs_wakeup(&t->umem.fill) && t->zerocopy)
			recvfrom(t->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		afx_receive(t);
		if (afx.nthreads > 1)
			afx_steer_take(t);
		nrx = t->nrx;
		t->nrx = 0;
		iip_run(t->workspace, afx.ifi.mac, afx.ip4_be, (void **) t->rxbatch, (uint16_t) nrx, &next_us, t->opaque);
		__app_loop(t->workspace, afx.ifi.mac, afx.ip4_be, &next_us, t->opaque);
		afx_transmit(t);
		t->iterations++;
		if (afx_tx_unsent(t) && afx_kick_tx(t) == 0)
			continue; /* the kernel stopped short (EAGAIN/ENOBUFS): push again */
		if (nrx || t->npending || !poll_cap_us)
			continue; /* busy: go round again at once */
		wait_us = next_us < poll_cap_us ? next_us : poll_cap_us;
		afx_wait(t, wait_us);
	}
	return NULL;
}

static void afx_on_signal(int sig)
{
	(void) sig;
	atomic_store(&afx.stop, 1);
}

static void afx_print_thread_stats(const struct afx_thread *t)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	const struct io_pkt_buf_class *c = &t->pool.cls[IO_PKT_CLASS_NORMAL];
	uint32_t held;
	printf("af_xdp: thread %u (core %u, queue %u): rx %llu frames %llu bytes, tx %llu frames %llu bytes, "
	       "steered out %llu in %llu (no buffer %llu), tx linearized %llu, tx dropped: oversize %llu no-buffer %llu "
	       "queue-full %llu, kick errors %llu, completion mismatches %llu, rx bad descriptors %llu, "
	       "rx no descriptor %llu, fill ring starved %llu, iterations %llu, sleeps %llu\n",
	       t->index, t->core, t->queue, (unsigned long long) t->rx_frames, (unsigned long long) t->rx_bytes,
	       (unsigned long long) t->tx_frames, (unsigned long long) t->tx_bytes, (unsigned long long) t->steer_out,
	       (unsigned long long) t->steer_in, (unsigned long long) t->steer_in_nobuf,
	       (unsigned long long) t->tx_linearized, (unsigned long long) t->tx_drop_oversize,
	       (unsigned long long) t->tx_drop_nobuf, (unsigned long long) t->tx_drop_full,
	       (unsigned long long) t->kick_errors, (unsigned long long) t->txq.comp_mismatch,
	       (unsigned long long) t->umem.rx_bad_desc, (unsigned long long) t->umem.rx_no_desc,
	       (unsigned long long) t->fill_starved, (unsigned long long) t->iterations, (unsigned long long) t->sleeps);
	memset(&st, 0, sizeof(st));
	if (t->fd > 0 && getsockopt(t->fd, SOL_XDP, XDP_STATISTICS, &st, &len) == 0)
		printf("af_xdp: thread %u: kernel: rx dropped %llu, rx invalid %llu, tx invalid %llu, rx ring full %llu, "
		       "fill ring empty %llu, tx ring empty %llu\n",
		       t->index, (unsigned long long) st.rx_dropped, (unsigned long long) st.rx_invalid_descs,
		       (unsigned long long) st.tx_invalid_descs, (unsigned long long) st.rx_ring_full,
		       (unsigned long long) st.rx_fill_ring_empty_descs, (unsigned long long) st.tx_ring_empty_descs);
	held = (c->count - c->nfree) - t->umem.in_kernel - afx_txq_count(&t->txq);
	printf("af_xdp: thread %u: frames: %u total, %u free, %u with the kernel (fill/rx), %u in tx, "
	       "%u held by the stack or app; first rx data offset ",
	       t->index, c->count, c->nfree, t->umem.in_kernel, afx_txq_count(&t->txq), held);
	if (t->umem.rx_offset_seen)
		printf("%llu\n", (unsigned long long) t->umem.rx_offset_seen);
	else
		printf("none (nothing received)\n");
}

static void afx_ip_str(uint32_t ip4_be, char *buf, size_t n)
{
	struct in_addr a;
	a.s_addr = ip4_be;
	inet_ntop(AF_INET, &a, buf, (socklen_t) n);
}

static int afx_setup(int argc, char *const *argv, int afx_argc)
{
	const struct afx_conf *c = &afx.conf;
	char err[256], ip[INET_ADDRSTRLEN], cores[256];
	uint32_t max_mtu;
	uint16_t i, j;
	(void) argc;
	if (geteuid() != 0) {
		fprintf(stderr, "%s: af_xdp: must run as root (AF_XDP sockets and XDP programs need CAP_NET_ADMIN, "
			"CAP_NET_RAW and CAP_BPF)\n", argv[0]);
		return 1;
	}
	(void) afx_argc;
	if (afx_ifinfo_get(c->ifname, &afx.ifi, err, sizeof(err))) {
		fprintf(stderr, "%s: af_xdp: %s\n", argv[0], err);
		return 1;
	}
	afx.ip4_be = c->ip4_override_be ? c->ip4_override_be : afx.ifi.ip4_be;
	if (!afx.ip4_be) {
		fprintf(stderr, "%s: af_xdp: interface %s has no IPv4 address: assign one (ip addr add ...) or give -a IP\n",
			argv[0], c->ifname);
		return 1;
	}
	afx.nthreads = c->cores.count;
	if (afx.nthreads > afx.ifi.rx_queues) {
		fprintf(stderr, "%s: af_xdp: %u threads (-l) but %s has %u receive queue%s (%s): one queue per thread; "
			"use fewer cores or more queues (ethtool -L %s combined %u)\n",
			argv[0], afx.nthreads, c->ifname, afx.ifi.rx_queues, afx.ifi.rx_queues == 1 ? "" : "s",
			afx.ifi.rx_queues_from, c->ifname, afx.nthreads);
		return 1;
	}
	if (afx.nthreads < afx.ifi.rx_queues) {
		/* the XDP program passes frames of queues without a socket to
		 * Linux, which owns the same address and resets our connections */
		fprintf(stderr, "%s: af_xdp: %u thread%s (-l) but %s has %u receive queues (%s): frames arriving on a "
			"queue without a thread would go to the Linux stack (which resets TCP connections it does not "
			"know); give -l %u cores or set the queues: ethtool -L %s combined %u (or rx %u tx %u)\n",
			argv[0], afx.nthreads, afx.nthreads == 1 ? "" : "s", c->ifname, afx.ifi.rx_queues,
			afx.ifi.rx_queues_from, afx.ifi.rx_queues, c->ifname, afx.nthreads, afx.nthreads, afx.nthreads);
		return 1;
	}
	max_mtu = c->frame_size - AFX_UMEM_FRAME_HEADROOM - XDP_PACKET_HEADROOM - 14u;
	if (afx.ifi.mtu > max_mtu || afx.ifi.mtu < 68) {
		fprintf(stderr, "%s: af_xdp: %s has MTU %u; with %u-byte frames the largest is %u%s\n", argv[0],
			c->ifname, afx.ifi.mtu, c->frame_size, max_mtu, c->frame_size < 4096 ? " (try -f 4096)" : "");
		return 1;
	}
	for (i = 0; i < afx.nthreads; i++)
		for (j = 0; j < i; j++)
			if (c->cores.cores[i] == c->cores.cores[j]) {
				fprintf(stderr, "%s: af_xdp: core %u appears twice in -l\n", argv[0], c->cores.cores[i]);
				return 1;
			}
	{ /* every core must be one this process may run on */
		cpu_set_t allowed;
		if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
			for (i = 0; i < afx.nthreads; i++)
				if (!CPU_ISSET(c->cores.cores[i], &allowed)) {
					fprintf(stderr, "%s: af_xdp: core %u (-l) is not available to this process\n", argv[0],
						c->cores.cores[i]);
					return 1;
				}
	}
	if (io_rss_init(&afx.rss, NULL, afx.nthreads)) {
		fprintf(stderr, "%s: af_xdp: RSS setup failed\n", argv[0]);
		return 1;
	}
	if (afx.nthreads > 1 && c->steering == AFX_STEERING_NIC &&
	    afx_nic_rss_read(c->ifname, afx.nthreads, &afx.nic_rss, err, sizeof(err))) {
		fprintf(stderr, "%s: af_xdp: -S nic: %s\n", argv[0], err);
		return 1;
	}
	afx.threads = calloc(afx.nthreads, sizeof(*afx.threads));
	if (!afx.threads)
		return 1;
	for (i = 0; i < afx.nthreads; i++)
		afx.threads[i].waker.efd = -1;
	if (afx.nthreads > 1) {
		afx.steer = calloc((size_t) afx.nthreads * afx.nthreads, sizeof(*afx.steer));
		if (!afx.steer)
			return 1;
		for (i = 0; i < afx.nthreads; i++)
			for (j = 0; j < afx.nthreads; j++)
				if (i != j && afx_steer_ring_init(afx_steer_ring(i, j), AFX_STEER_SLOTS, afx.ifi.mtu + 14u)) {
					fprintf(stderr, "af_xdp: out of memory\n");
					return 1;
				}
	}
	for (i = 0; i < afx.nthreads; i++)
		if (afx_thread_setup(&afx.threads[i], i))
			return 1;
	libbpf_set_print(afx_libbpf_print);
	libxdp_set_print(afx_libxdp_print);
	if (afx_open_sockets())
		return 1;
	for (i = 0; i < afx.nthreads; i++)
		if (afx_thread_attach_pool(&afx.threads[i]))
			return 1;
	if (c->pcap_path) {
		struct timespec wall;
		if (io_pcap_open(&afx.pcap, c->pcap_path, c->pcap_nsec)) {
			fprintf(stderr, "%s: af_xdp: cannot write %s: %s\n", argv[0], c->pcap_path, strerror(errno));
			return 1;
		}
		clock_gettime(CLOCK_REALTIME, &wall);
		afx.pcap_epoch_ns = (uint64_t) wall.tv_sec * 1000000000ull + (uint64_t) wall.tv_nsec - io_clock_now_ns();
		afx.pcap_on = 1;
	}
	afx_ip_str(afx.ip4_be, ip, sizeof(ip));
	io_corelist_format(&c->cores, cores, sizeof(cores));
	printf("af_xdp: %s (ifindex %u) %02x:%02x:%02x:%02x:%02x:%02x %s mtu %u, %u thread%s on cores %s, "
	       "%s mode, %s, rx/tx rings %u/%u, %u frames of %u bytes per thread, %s, steering %s, pcap %s\n",
	       c->ifname, afx.ifi.index, afx.ifi.mac[0], afx.ifi.mac[1], afx.ifi.mac[2], afx.ifi.mac[3],
	       afx.ifi.mac[4], afx.ifi.mac[5], ip, afx.ifi.mtu, afx.nthreads, afx.nthreads == 1 ? "" : "s", cores,
	       afx.mode_name, afx.threads[0].zerocopy ? "zero-copy" : "copy", c->rx_size, c->tx_size, c->nframes,
	       c->frame_size, c->poll_ms ? "poll() when idle" : "busy poll",
	       afx.nthreads < 2 ? "none (1 thread)" : c->steering == AFX_STEERING_SW ? "software (Toeplitz)" :
	       c->steering == AFX_STEERING_NIC ? "none, the NIC's RSS" : "off",
	       c->pcap_path ? c->pcap_path : "off");
	fflush(stdout);
	return 0;
}

static void afx_teardown(void)
{
	uint16_t i, j;
	if (afx.threads)
		for (i = 0; i < afx.nthreads; i++)
			afx_thread_teardown(&afx.threads[i]);
	if (afx.steer) {
		for (i = 0; i < afx.nthreads; i++)
			for (j = 0; j < afx.nthreads; j++)
				afx_steer_ring_destroy(afx_steer_ring(i, j));
		free(afx.steer);
	}
	free(afx.threads);
	free(afx.nic_rss.indir);
	afx.nic_rss.indir = NULL;
	afx.threads = NULL;
	afx.steer = NULL;
}

static int __iosub_main(int argc, char *const *argv)
{
	int afx_argc, rc = 0;
	uint16_t i;
	struct sigaction sa;
	char **app_argv;

	IO_STACK_CALLS_MAY_GO_UNUSED();
	if (argc < 1)
		return 2;
	afx_argc = io_args_backend_end(argc, argv);
	if (afx_parse_options(afx_argc, argv, &afx.conf)) {
		afx_usage(stderr, argv[0]);
		return 2;
	}
	pthread_mutex_init(&afx.pcap_lock, NULL);
	if (afx_setup(argc, argv, afx_argc)) {
		afx_teardown();
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = afx_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	{ /* the application's options: argv[0] and everything after "--" */
		int app_argc;
		app_argv = io_args_app_argv(argc, argv, afx_argc + 1, &app_argc);
		if (!app_argv) {
			afx_teardown();
			return 1;
		}
		io_args_reset_getopt();
		afx.threads[0].opaque[1] = __app_init(app_argc, app_argv);
		for (i = 1; i < afx.nthreads; i++)
			afx.threads[i].opaque[1] = afx.threads[0].opaque[1];
		/* app_argv lives until after __app_exit: the app may keep pointers into it */
	}
	for (i = 0; i < afx.nthreads; i++) {
		struct afx_thread *t = &afx.threads[i];
		pthread_attr_t attr;
		cpu_set_t set;
		int e;
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(t->core, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		e = pthread_create(&t->tid, &attr, afx_thread_main, t);
		pthread_attr_destroy(&attr);
		if (e) {
			fprintf(stderr, "af_xdp: cannot start thread %u on core %u: %s\n", i, t->core, strerror(e));
			atomic_store(&afx.stop, 1);
			rc = 1;
			break;
		}
		t->started = 1;
	}
	for (i = 0; i < afx.nthreads; i++)
		if (afx.threads[i].started)
			pthread_join(afx.threads[i].tid, NULL);
	__app_exit(afx.threads[0].opaque[1]);
	free(app_argv);
	for (i = 0; i < afx.nthreads; i++) {
		struct afx_thread *t = &afx.threads[i];
		uint32_t k;
		for (k = 0; k < t->nrx; k++)
			io_pkt_free(t->rxbatch[k]);
		t->nrx = 0;
		afx_transmit(t); /* what the application sent last */
		afx_umem_reap_completions(&t->umem, &t->txq);
		afx_print_thread_stats(t);
	}
	if (afx.nthreads > 1 && afx.steer) {
		uint64_t full = 0;
		uint16_t j;
		for (i = 0; i < afx.nthreads; i++)
			for (j = 0; j < afx.nthreads; j++)
				full += afx_steer_ring(i, j)->dropped_full + afx_steer_ring(i, j)->dropped_oversize;
		printf("af_xdp: steering rings: %llu frames dropped (ring full or oversize)\n", (unsigned long long) full);
	}
	if (afx.pcap_on && io_pcap_close(&afx.pcap)) {
		fprintf(stderr, "af_xdp: error writing %s\n", afx.conf.pcap_path);
		rc = 1;
	}
	fflush(stdout);
	afx_teardown();
	return rc;
}
