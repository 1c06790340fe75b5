/*
 * io/tap/main.c — the tap backend: the stack talks to the Linux kernel
 * through a TAP device (an Ethernet interface whose "wire" is a file
 * descriptor). Useful for trying an application against the host's own
 * tools (ping, curl) without any special hardware.
 *
 * Command line (COMPAT.md section 3):
 *   app -i TAP -a IP[/PREFIX] [-M MAC] [-k IP/PREFIX] [-l CORES] [-e MS]
 *       [-F FEATURES] [-m MTU] [-b N] [-c N] [-p N] [-q N] -- [app options]
 *
 * One thread per core of -l; with more than one, the tap is opened with
 * IFF_MULTI_QUEUE and every thread owns one queue, one stack workspace and
 * one packet pool (no locks anywhere). A steering program (steer.h) makes
 * the kernel's choice of queue a function helper_ip4_get_connection_affinity
 * can compute.
 *
 * Each thread loops: read a batch of frames (non-blocking), iip_run,
 * __app_loop, write what was pushed, then wait for the tap to become
 * readable for at most min(next_us, -e MS) (-e 0: never wait, busy poll).
 *
 * Offloads (-F): with csum, tso or lro the tap is opened with IFF_VNET_HDR
 * and every frame carries a virtio-net header (../common/vnet.h); sg needs nothing
 * from the kernel (frames are written with writev).
 *
 * This file is included into the application's translation unit after the
 * stack; it needs libc and pthreads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "../common/pkt.h"
#include "../common/pkt_offload.h"
#include "../common/corelist.h"
#include "../common/args.h"
#include "../common/clock.h"
#include "../common/threads.h"
#include "../common/stack_setup.h"
#include "../common/stack_counters.h"
#include "../common/ifquery.h"
#include "../common/wait.h"
#include "../common/vnet.h"
#include "steer.h"

#include "../common/app_contract.h"
#include "../common/nic_features.h"

#define TAP_MAX_THREADS 64
#define TAP_MAX_RX_SEGS 40          /* 64 KiB GSO frame in buffers of >= 2 KiB */

/* -F bits: the stack's offloads (io/common/nic_features.h), and LRO */
#define TAP_F_SG   IO_NIC_F_SG
#define TAP_F_CSUM IO_NIC_F_L4_CSUM
#define TAP_F_TSO  IO_NIC_F_TSO
#define TAP_F_LRO  (1u << 8)

struct tap_thread {
	uint16_t index, core;
	int fd;
	pthread_t th;
	void *workspace, *conns, *pbs;
	struct io_pkt_pool pool;
	void *opaque[3];            /* [0] this thread, [1] app global, [2] app thread */
	struct io_pkt **tx;         /* pushed, waiting for flush */
	uint32_t ntx;
	struct io_pkt **rx;         /* read, waiting for iip_run */
	struct io_pkt *spare[TAP_MAX_RX_SEGS]; /* buffers ready for the next read */
	uint32_t nspare;
	struct io_vnet_stats vnet;
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_drop_nobuf, rx_drop_error, tx_drop_error, rx_missteered;
};

struct tap_conf {
	char ifname[IFNAMSIZ];
	uint32_t ip4_be;
	int prefix;
	uint8_t mac[6];
	int mac_set;
	uint32_t kernel_ip4_be;
	int kernel_prefix;          /* -1: -k not given */
	struct io_corelist cores;
	uint32_t wait_ms;
	uint32_t features;
	uint16_t mtu;               /* 0: the device's */
	uint32_t nbufs, nconn, npb, batch;
};

static struct {
	struct tap_conf conf;
	struct tap_thread *threads;
	uint16_t nthreads;
	int vnet_hdr;
	void *app_global;
	volatile sig_atomic_t stop;
} tap;

#define IO_PKT_POOL_OF(opaque) (&((struct tap_thread *) ((void **) (opaque))[0])->pool)
#include "../common/pkt_ops.h"
#include "../common/eth_ops.h"

static struct tap_thread *tap_thread_of(void *opaque)
{
	return (struct tap_thread *) ((void **) opaque)[0];
}

/* ---- L2 and NIC callbacks ---------------------------------------------------- */

/* the tap hands us what the kernel sends out of it: frames for other MACs
 * (a bridge floods unknown destinations) are not ours */
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque)
{
	(void) opaque;
	return io_eth_not_for((const struct io_pkt *) pkt, tap.conf.mac);
}

/* virtio-net has no IPv4 header checksum offload: the stack does it */
static uint32_t io_nic_features(void *opaque)
{
	(void) opaque;
	return tap.conf.features;
}

/* the thread whose queue the kernel hands this flow to (steer.h) */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	(void) opaque;
	return io_flow_hash_member(protocol, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be, tap.nthreads);
}

/* ---- transmit ------------------------------------------------------------------ */

static void tap_write_frame(struct tap_thread *t, struct io_pkt *frame)
{
	struct iovec iov[1 + 64];
	struct virtio_net_hdr vh;
	struct io_pkt *s;
	int n = 0;
	ssize_t len = 0, w;
	if (tap.vnet_hdr) {
		if (io_vnet_tx_fill(&vh, frame, tap.conf.mtu, &t->vnet)) {
			t->tx_drop_error++;
			return;
		}
		iov[n].iov_base = &vh;
		iov[n++].iov_len = sizeof(vh);
	}
	for (s = frame; s; s = s->next) {
		if (n == (int) (sizeof(iov) / sizeof(iov[0]))) {
			t->tx_drop_error++;
			return;
		}
		iov[n].iov_base = s->data;
		iov[n++].iov_len = s->len;
		len += s->len;
	}
	w = writev(t->fd, iov, n);
	if (w < 0) { /* EIO: the interface is down; anything else: dropped too */
		t->tx_drop_error++;
		return;
	}
	t->tx_frames++;
	t->tx_bytes += (uint64_t) len;
}

/* the kernel copies on write, so the stack's packets are freed right away
 * (it keeps its own clones for retransmission) */
static void iip_ops_l2_flush(void *opaque)
{
	struct tap_thread *t = tap_thread_of(opaque);
	uint32_t i;
	for (i = 0; i < t->ntx; i++) {
		tap_write_frame(t, t->tx[i]);
		io_pkt_free(t->tx[i]);
	}
	t->ntx = 0;
}

static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct tap_thread *t = tap_thread_of(opaque);
	if (t->ntx == tap.conf.batch)
		iip_ops_l2_flush(opaque);
	t->tx[t->ntx++] = (struct io_pkt *) pkt;
}

/* ---- receive ------------------------------------------------------------------- */

/* segments one read may fill: one frame of MTU size, or a 64 KiB GSO frame */
static uint32_t tap_rx_segs_needed(const struct tap_thread *t)
{
	uint32_t room = t->pool.cls[IO_PKT_CLASS_NORMAL].size - IO_PKT_ALIGN_PAD;
	uint32_t max_frame = (tap.conf.features & TAP_F_LRO) ? 65550u : tap.conf.mtu + 14u;
	uint32_t n = (max_frame + room - 1) / room;
	return n > TAP_MAX_RX_SEGS ? TAP_MAX_RX_SEGS : n;
}

/*
 * Reads one frame into the spare buffers (chained when it is larger than
 * one). Returns 1 with *out set, 0 when nothing is waiting, 2 when a
 * malformed frame was dropped (more may wait), -1 when no buffer is free
 * (the frame stays in the kernel's queue).
 */
static int tap_read_frame(struct tap_thread *t, struct io_pkt **out)
{
	struct iovec iov[1 + TAP_MAX_RX_SEGS];
	struct virtio_net_hdr vh;
	uint32_t need = tap_rx_segs_needed(t), i, used;
	int n = 0;
	ssize_t r;
	size_t left;
	while (t->nspare < need) {
		struct io_pkt *p = io_pkt_alloc(&t->pool);
		if (!p)
			return -1;
		t->spare[t->nspare++] = p;
	}
	if (tap.vnet_hdr) {
		iov[n].iov_base = &vh;
		iov[n++].iov_len = sizeof(vh);
	}
	for (i = 0; i < need; i++) {
		iov[n].iov_base = t->spare[i]->data;
		iov[n++].iov_len = io_pkt_room(t->spare[i]);
	}
	r = readv(t->fd, iov, n);
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR)
			t->rx_drop_error++;
		return 0;
	}
	if (tap.vnet_hdr) {
		if (r < (ssize_t) sizeof(vh)) {
			t->rx_drop_error++;
			return 2;
		}
		r -= (ssize_t) sizeof(vh);
	}
	if (r < 14) {
		t->rx_drop_error++;
		return 2;
	}
	/* hand over the buffers that got bytes, chained in order */
	left = (size_t) r;
	for (used = 0; left; used++) {
		uint32_t room = io_pkt_room(t->spare[used]);
		uint32_t k = left < room ? (uint32_t) left : room;
		io_pkt_set_len(t->spare[used], k);
		t->spare[used]->flags = 0;
		if (used)
			t->spare[used - 1]->next = t->spare[used];
		left -= k;
	}
	t->spare[used - 1]->next = NULL;
	*out = t->spare[0];
	memmove(t->spare, t->spare + used, (t->nspare - used) * sizeof(t->spare[0]));
	t->nspare -= used;
	if (tap.vnet_hdr)
		io_vnet_rx_note(&vh, *out, &t->vnet);
	if (tap.nthreads > 1 && io_flow_hash_member_of_frame((*out)->data, (*out)->len, tap.nthreads) != t->index)
		t->rx_missteered++; /* the helper and the kernel disagree: should stay 0 */
	t->rx_frames++;
	t->rx_bytes += (uint64_t) r;
	return 1;
}

static uint16_t tap_rx_burst(struct tap_thread *t)
{
	uint16_t n = 0;
	uint32_t reads;
	/* at most one batch of reads per round, dropped frames included, so
	 * a stream of malformed frames cannot hold the thread here */
	for (reads = 0; n < tap.conf.batch && reads < tap.conf.batch; reads++) {
		int r = tap_read_frame(t, &t->rx[n]);
		if (r < 0) {
			t->rx_drop_nobuf++;
			break;
		}
		if (r == 0)
			break;
		if (r == 1)
			n++;
	}
	return n;
}

/* ---- the thread ------------------------------------------------------------------ */

static void *tap_thread_main(void *arg)
{
	struct tap_thread *t = arg;
	const struct tap_conf *c = &tap.conf;
	uint8_t mac[6];
	memcpy(mac, c->mac, 6);
	t->opaque[2] = __app_thread_init(t->workspace, t->index, t->opaque); /* the thread index, as seed 003 passes it */
	while (!tap.stop && !__app_should_stop(t->opaque)) {
		uint32_t next_us = 1000000;
		uint16_t n = tap_rx_burst(t);
		iip_run(t->workspace, mac, c->ip4_be, (void **) t->rx, n, &next_us, t->opaque);
		__app_loop(t->workspace, mac, c->ip4_be, &next_us, t->opaque);
		iip_ops_l2_flush(t->opaque);
		if (!n)
			io_wait_readable(t->fd, tap.conf.wait_ms, next_us);
	}
	return NULL;
}

/* ---- options ------------------------------------------------------------------------ */

static void tap_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -i TAP -a IP[/PREFIX] [tap options] -- [app options]\n"
		"  -i TAP       tap device to open, created if missing (needs CAP_NET_ADMIN)\n"
		"  -a IP[/LEN]  the stack's IPv4 address\n"
		"  -M MAC       the stack's MAC (default: random, locally administered)\n"
		"  -k IP/LEN    give the kernel side of the tap this address and bring it up\n"
		"               (without -k nothing is configured on the Linux side)\n"
		"  -l CORES     one thread (and one tap queue) per core, e.g. 0 or 0-1 (default 0)\n"
		"  -e MS        longest wait for frames when idle; 0 = busy poll (default 10)\n"
		"  -F LIST      offloads: comma list of sg,csum,tso,lro or none (default none);\n"
		"               csum/tso/lro use the virtio-net header (IFF_VNET_HDR)\n"
		"  -m MTU       IP MTU (default: the device's; with -k also set on the device)\n"
		"  -b N         packet buffers per thread (default 16384)\n"
		"  -c N         TCP connections per thread (default 4096)\n"
		"  -p N         stack packet wrappers per thread (default 65536)\n"
		"  -q N         rx/tx batch (default 256)\n"
		"  -h           this help\n",
		prog);
}

static int tap_bad(const char *prog, int opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: invalid -%c '%s': %s\n", prog, opt, arg ? arg : "", why);
	tap_usage(stderr, prog);
	return -1;
}

/* "A.B.C.D" or "A.B.C.D/LEN"; *prefix = -1 when no length is given */
static int tap_parse_ip_prefix(const char *s, uint32_t *ip_be, int *prefix)
{
	char buf[32], *slash;
	struct in_addr a;
	uint32_t len;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*prefix = -1;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (io_args_u32(slash + 1, 0, 32, &len))
			return -1;
		*prefix = (int) len;
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*ip_be = a.s_addr;
	return 0;
}

static const struct io_args_flag tap_feature_names[] = {
	{ "sg", TAP_F_SG },
	{ "csum", TAP_F_CSUM },
	{ "tso", TAP_F_TSO },
	{ "lro", TAP_F_LRO },
	{ NULL, 0 },
};

static int tap_parse_options(int n, char *const *argv, struct tap_conf *c)
{
	const char *prog = argv[0];
	char err[256];
	uint32_t v;
	int opt, have_ip = 0;
	memset(c, 0, sizeof(*c));
	c->kernel_prefix = -1;
	c->wait_ms = 10;
	c->nbufs = 16384;
	c->nconn = 4096;
	c->npb = 65536;
	c->batch = 256;
	c->cores.count = 1;
	c->cores.cores[0] = 0;
	optind = 1;
	opterr = 0;
	while ((opt = getopt(n, argv, ":i:a:M:k:l:e:F:m:b:c:p:q:h")) != -1) {
		switch (opt) {
		case 'i':
			if (!optarg[0] || strlen(optarg) >= IFNAMSIZ || strchr(optarg, '/') || strchr(optarg, ' '))
				return tap_bad(prog, opt, optarg, "an interface name of 1..15 characters");
			strcpy(c->ifname, optarg);
			break;
		case 'a':
			if (tap_parse_ip_prefix(optarg, &c->ip4_be, &c->prefix))
				return tap_bad(prog, opt, optarg, "IPv4 address, optionally /PREFIX");
			have_ip = 1;
			break;
		case 'M':
			if (io_args_mac(optarg, c->mac))
				return tap_bad(prog, opt, optarg, "a unicast MAC such as 02:00:00:00:00:01");
			c->mac_set = 1;
			break;
		case 'k':
			if (tap_parse_ip_prefix(optarg, &c->kernel_ip4_be, &c->kernel_prefix) || c->kernel_prefix < 0)
				return tap_bad(prog, opt, optarg, "IPv4 address/PREFIX, e.g. 10.0.0.1/24");
			break;
		case 'l':
			if (io_corelist_parse(optarg, &c->cores, err, sizeof(err)))
				return tap_bad(prog, opt, optarg, err);
			if (c->cores.count > TAP_MAX_THREADS)
				return tap_bad(prog, opt, optarg, "at most 64 cores");
			break;
		case 'e':
			if (io_args_u32(optarg, 0, 60000, &c->wait_ms))
				return tap_bad(prog, opt, optarg, "milliseconds 0..60000");
			break;
		case 'F':
			if (io_args_flags(optarg, tap_feature_names, &c->features))
				return tap_bad(prog, opt, optarg, "comma list of sg,csum,tso,lro or none");
			break;
		case 'm':
			if (io_args_u32(optarg, 68, 65000, &v))
				return tap_bad(prog, opt, optarg, "68..65000");
			c->mtu = (uint16_t) v;
			break;
		case 'b': if (io_args_u32(optarg, 256, 1u << 24, &c->nbufs)) return tap_bad(prog, opt, optarg, "256..16777216"); break;
		case 'c': if (io_args_u32(optarg, 1, 1u << 22, &c->nconn)) return tap_bad(prog, opt, optarg, "1..4194304"); break;
		case 'p': if (io_args_u32(optarg, 64, 1u << 24, &c->npb)) return tap_bad(prog, opt, optarg, "64..16777216"); break;
		case 'q': if (io_args_u32(optarg, 1, 4096, &c->batch)) return tap_bad(prog, opt, optarg, "1..4096"); break;
		case 'h': tap_usage(stdout, prog); exit(0);
		default: /* ':' or '?' */
			io_args_getopt_error(prog, opt);
			tap_usage(stderr, prog);
			return -1;
		}
	}
	if (io_args_no_operands(prog, n, argv)) {
		tap_usage(stderr, prog);
		return -1;
	}
	if (!c->ifname[0] || !have_ip) {
		fprintf(stderr, "%s: -i TAP and -a IP are required\n", prog);
		tap_usage(stderr, prog);
		return -1;
	}
	if ((c->features & TAP_F_TSO) && !(c->features & TAP_F_CSUM)) {
		fprintf(stderr, "%s: -F tso needs csum (segmentation fills the checksums)\n", prog);
		return -1;
	}
	if ((c->features & TAP_F_LRO) && !(c->features & TAP_F_CSUM)) {
		fprintf(stderr, "%s: -F lro needs csum (the kernel hands large frames with unfinished checksums)\n", prog);
		return -1;
	}
	if (c->kernel_prefix >= 0 && c->kernel_ip4_be == c->ip4_be) {
		fprintf(stderr, "%s: -k and -a give the same address\n", prog);
		return -1;
	}
	return 0;
}

/* ---- the device --------------------------------------------------------------------- */

/* opens one queue of the tap; prints why it failed */
static int tap_open_queue(const char *prog, uint16_t q)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV)
			fprintf(stderr, "%s: /dev/net/tun is missing (load the tun module: modprobe tun)\n", prog);
		else if (errno == EACCES || errno == EPERM)
			fprintf(stderr, "%s: cannot open /dev/net/tun: %s (run as root)\n", prog, strerror(errno));
		else
			fprintf(stderr, "%s: cannot open /dev/net/tun: %s\n", prog, strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, tap.conf.ifname);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (tap.nthreads > 1)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	if (tap.vnet_hdr)
		ifr.ifr_flags |= IFF_VNET_HDR;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			fprintf(stderr, "%s: cannot attach tap %s: %s (needs root or CAP_NET_ADMIN)\n", prog,
				tap.conf.ifname, strerror(e));
		else if (e == EBUSY)
			fprintf(stderr, "%s: tap %s is busy: another process has it open%s\n", prog, tap.conf.ifname,
				tap.nthreads > 1 ? " (or it exists without IFF_MULTI_QUEUE)" : "");
		else if (e == EINVAL)
			fprintf(stderr, "%s: cannot attach %s: %s (is it a tun device, or a tap created with "
					"other flags, e.g. multi-queue vs single-queue?)\n",
				prog, tap.conf.ifname, strerror(e));
		else
			fprintf(stderr, "%s: cannot attach tap %s (queue %u): %s\n", prog, tap.conf.ifname, q,
				strerror(e));
		close(fd);
		return -1;
	}
	if (tap.vnet_hdr) {
		unsigned off = 0;
		int hdrsz = (int) sizeof(struct virtio_net_hdr);
		if (tap.conf.features & TAP_F_CSUM)
			off |= TUN_F_CSUM;
		if (tap.conf.features & TAP_F_LRO)
			off |= TUN_F_TSO4;
		if (ioctl(fd, TUNSETVNETHDRSZ, &hdrsz) < 0 || ioctl(fd, TUNSETOFFLOAD, off) < 0) {
			fprintf(stderr, "%s: cannot set the offloads of %s: %s\n", prog, tap.conf.ifname, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static uint32_t tap_prefix_mask_be(int prefix)
{
	return htonl(prefix ? 0xffffffffu << (32 - prefix) : 0);
}

/* -k: address, MTU and "up" on the kernel side, through ioctls */
static int tap_configure_kernel_side(const char *prog)
{
	const char *name = tap.conf.ifname;
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *) &ifr.ifr_addr;
	memset(&ifr, 0, sizeof(ifr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = tap.conf.kernel_ip4_be;
	if (io_if_ioctl(name, SIOCSIFADDR, &ifr) < 0)
		goto fail;
	sin->sin_addr.s_addr = tap_prefix_mask_be(tap.conf.kernel_prefix);
	if (io_if_ioctl(name, SIOCSIFNETMASK, &ifr) < 0)
		goto fail;
	if (tap.conf.mtu) {
		ifr.ifr_mtu = tap.conf.mtu;
		if (io_if_ioctl(name, SIOCSIFMTU, &ifr) < 0)
			goto fail;
	}
	if (io_if_ioctl(name, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP;
	if (io_if_ioctl(name, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "%s: cannot configure the kernel side of %s (-k): %s\n", prog, name, strerror(errno));
	return -1;
}

/* the device's MTU and whether it is up, for the banner and the defaults */
static void tap_query_device(uint16_t *mtu, int *up)
{
	*mtu = io_if_mtu_or(tap.conf.ifname, 1500);
	*up = io_if_is_up(tap.conf.ifname) == 1;
}

/* ---- setup and teardown --------------------------------------------------------------- */

static int tap_thread_setup(const char *prog, struct tap_thread *t, uint16_t index)
{
	const struct tap_conf *c = &tap.conf;
	uint32_t bufsize = c->mtu + 14u + IO_PKT_ALIGN_PAD + 64u;
	t->index = index;
	t->core = c->cores.cores[index];
	t->opaque[0] = t;
	t->opaque[1] = tap.app_global;
	if (bufsize < 2048)
		bufsize = 2048;
	if (bufsize > 16384) /* jumbo MTUs: frames are chained over 16 KiB buffers */
		bufsize = 16384;
	if (io_pkt_pool_init(&t->pool, c->nbufs * 2u, c->nbufs, bufsize, 0, 0)) {
		fprintf(stderr, "%s: thread %u: cannot allocate %u packet buffers\n", prog, index, c->nbufs);
		return -1;
	}
	t->tx = calloc(c->batch, sizeof(*t->tx));
	t->rx = calloc(c->batch, sizeof(*t->rx));
	if (io_stack_create(&t->workspace, &t->conns, c->nconn, &t->pbs, c->npb) || !t->tx || !t->rx) {
		fprintf(stderr, "%s: thread %u: out of memory\n", prog, index);
		return -1;
	}
	iip_set_mtu(t->workspace, c->mtu);
	return io_stack_random_isn_secret(t->workspace, prog);
}

static void tap_thread_teardown(struct tap_thread *t)
{
	uint32_t i;
	for (i = 0; i < t->nspare; i++)
		io_pkt_free(t->spare[i]);
	t->nspare = 0;
	if (t->fd >= 0)
		close(t->fd);
	free(t->workspace);
	free(t->conns);
	free(t->pbs);
	free(t->tx);
	free(t->rx);
	io_pkt_pool_destroy(&t->pool);
}

static void tap_on_signal(int sig)
{
	(void) sig;
	tap.stop = 1;
}

static void tap_print_stats(void)
{
	uint16_t i;
	for (i = 0; i < tap.nthreads; i++) {
		struct tap_thread *t = &tap.threads[i];
		char name[64];
		printf("tap: thread %u (core %u): rx %llu frames %llu bytes, tx %llu frames %llu bytes, "
		       "dropped: rx-nobuf %llu rx-error %llu tx-error %llu; mis-steered %llu\n",
		       i, t->core, (unsigned long long) t->rx_frames, (unsigned long long) t->rx_bytes,
		       (unsigned long long) t->tx_frames, (unsigned long long) t->tx_bytes,
		       (unsigned long long) t->rx_drop_nobuf, (unsigned long long) t->rx_drop_error,
		       (unsigned long long) t->tx_drop_error, (unsigned long long) t->rx_missteered);
		if (tap.vnet_hdr)
			printf("tap: thread %u: vnet: tx csum %llu tso %llu pseudo-fixed %llu bad %llu; rx data-valid %llu "
			       "needs-csum %llu gso %llu sw-verified %llu\n",
			       i, (unsigned long long) t->vnet.tx_csum, (unsigned long long) t->vnet.tx_tso,
			       (unsigned long long) t->vnet.tx_pseudo_fixed, (unsigned long long) t->vnet.tx_bad,
			       (unsigned long long) t->vnet.rx_data_valid, (unsigned long long) t->vnet.rx_needs_csum,
			       (unsigned long long) t->vnet.rx_gso, (unsigned long long) t->vnet.rx_sw_verified);
		io_stack_print_counters("tap", i, t->workspace);
		snprintf(name, sizeof(name), "tap: thread %u", i);
		/* connections still open at exit hold packets: informational */
		io_pkt_pool_report(&t->pool, stdout, name);
	}
}

static int __iosub_main(int argc, char *const *argv)
{
	const char *prog = argc > 0 ? argv[0] : "tap";
	int nopt, rc = 0, up;
	uint16_t i, dev_mtu;
	char ip[INET_ADDRSTRLEN], cores[128];
	struct sigaction sa;

	IO_STACK_CALLS_MAY_GO_UNUSED();
	if (argc < 1)
		return 2;
	nopt = io_args_backend_end(argc, argv);
	if (tap_parse_options(nopt, argv, &tap.conf))
		return 2;
	tap.nthreads = tap.conf.cores.count;
	tap.vnet_hdr = (tap.conf.features & (TAP_F_CSUM | TAP_F_TSO | TAP_F_LRO)) != 0;
	if (io_threads_check_cores(prog, &tap.conf.cores))
		return 2;
	if (!tap.conf.mac_set) {
		if (getrandom(tap.conf.mac, 6, 0) != 6) {
			fprintf(stderr, "%s: getrandom: %s\n", prog, strerror(errno));
			return 2;
		}
		tap.conf.mac[0] = (uint8_t) ((tap.conf.mac[0] & 0xfc) | 0x02); /* unicast, locally administered */
	}
	tap.threads = calloc(tap.nthreads, sizeof(*tap.threads));
	if (!tap.threads)
		return 2;
	for (i = 0; i < tap.nthreads; i++)
		tap.threads[i].fd = -1;
	/* the device first: it gives the MTU the pools are sized for */
	for (i = 0; i < tap.nthreads; i++) {
		tap.threads[i].fd = tap_open_queue(prog, i);
		if (tap.threads[i].fd < 0) {
			rc = 2;
			goto out;
		}
	}
	if (tap.nthreads > 1) {
		char log[4096];
		int prog_fd = tap_steer_load(tap.nthreads, log, sizeof(log));
		if (prog_fd < 0 || ioctl(tap.threads[0].fd, TUNSETSTEERINGEBPF, &prog_fd) < 0) {
			fprintf(stderr, "%s: cannot attach the queue steering program: %s%s%s\n", prog, strerror(errno),
				log[0] ? "\n" : "", log);
			if (prog_fd >= 0)
				close(prog_fd);
			rc = 2;
			goto out;
		}
		close(prog_fd); /* the tap holds a reference */
	}
	if (tap.conf.kernel_prefix >= 0 && tap_configure_kernel_side(prog)) {
		rc = 2;
		goto out;
	}
	tap_query_device(&dev_mtu, &up);
	if (!tap.conf.mtu)
		tap.conf.mtu = dev_mtu;
	inet_ntop(AF_INET, &tap.conf.ip4_be, ip, sizeof(ip));
	io_corelist_format(&tap.conf.cores, cores, sizeof(cores));
	{
		char feat[64] = "";
		if (tap.conf.features & TAP_F_SG) strcat(feat, ",sg");
		if (tap.conf.features & TAP_F_CSUM) strcat(feat, ",csum");
		if (tap.conf.features & TAP_F_TSO) strcat(feat, ",tso");
		if (tap.conf.features & TAP_F_LRO) strcat(feat, ",lro");
		printf("tap: %s, %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, %u thread(s) on cores %s, "
		       "offloads %s, wait %u ms%s\n",
		       tap.conf.ifname, ip, tap.conf.mac[0], tap.conf.mac[1], tap.conf.mac[2], tap.conf.mac[3],
		       tap.conf.mac[4], tap.conf.mac[5], tap.conf.mtu, tap.nthreads, cores, feat[0] ? feat + 1 : "none",
		       tap.conf.wait_ms, tap.conf.wait_ms ? "" : " (busy poll)");
	}
	if (!up)
		fprintf(stderr, "%s: warning: %s is down; bring it up (ip link set %s up) or use -k\n", prog,
			tap.conf.ifname, tap.conf.ifname);
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tap_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	io_args_reset_getopt();
	{ /* the app's section: argv[0] then everything after "--" */
		int app_argc;
		char **app_argv = io_args_app_argv(argc, argv, nopt + 1, &app_argc);
		if (!app_argv) {
			rc = 2;
			goto out;
		}
		tap.app_global = __app_init(app_argc, app_argv);
		free(app_argv);
	}
	for (i = 0; i < tap.nthreads; i++) {
		if (tap_thread_setup(prog, &tap.threads[i], i)) {
			rc = 2;
			goto out;
		}
	}
	for (i = 0; i < tap.nthreads; i++) {
		struct tap_thread *t = &tap.threads[i];
		if (io_threads_start_pinned(prog, &t->th, tap_thread_main, t, i, t->core)) {
			tap.stop = 1;
			tap.nthreads = i;
			rc = 2;
			break;
		}
	}
	for (i = 0; i < tap.nthreads; i++)
		pthread_join(tap.threads[i].th, NULL);
	__app_exit(tap.app_global);
	for (i = 0; i < tap.nthreads; i++) { /* return the read-ahead buffers before counting */
		struct tap_thread *t = &tap.threads[i];
		while (t->nspare)
			io_pkt_free(t->spare[--t->nspare]);
	}
	tap_print_stats();
out:
	for (i = 0; i < tap.conf.cores.count; i++)
		tap_thread_teardown(&tap.threads[i]);
	free(tap.threads);
	fflush(stdout);
	return rc;
}
