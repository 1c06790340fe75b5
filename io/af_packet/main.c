/*
 * io/af_packet/main.c — the AF_PACKET backend: the stack sends and receives
 * raw Ethernet frames on an existing interface (a veth, a physical NIC)
 * through packet sockets, with a memory-mapped receive ring (PACKET_MMAP,
 * TPACKET_V3) and sendmsg for transmission.
 *
 * Command line (COMPAT.md section 3):
 *   app -i IFNAME [-a IP] [-M MAC] [-l CORES] [-e MS] [-F FEATURES]
 *       [-m MTU] [-b N] [-c N] [-p N] [-q N] [-B KIB] -- [app options]
 *
 * MAC, IPv4 address and MTU are the interface's unless -M / -a / -m say
 * otherwise. The kernel keeps receiving the same frames: if it owns the
 * address too, it also answers (ICMP, TCP RST). Give the stack an address
 * the kernel does not have (an interface without IPv4 address, and -a).
 *
 * One thread per core of -l, each with its own packet socket, ring, stack
 * workspace and packet pool. With more than one, the sockets form a
 * PACKET_FANOUT group steered by a classic BPF program (fanout.h) whose
 * choice helper_ip4_get_connection_affinity computes too.
 *
 * Each thread loops: copy a batch of frames out of the ring, iip_run,
 * __app_loop, send what was pushed, then wait for the socket to become
 * readable for at most min(next_us, -e MS) (-e 0: busy poll). The ring
 * hands over a block when it is full or after 1 ms (the block timeout).
 *
 * Checksums: -F csum reports receive checksum offload to the stack and
 * takes the kernel's word from the ring (TP_STATUS_CSUM_VALID: verified;
 * TP_STATUS_CSUMNOTREADY: a frame built on this host whose checksum was
 * left for "hardware", as veth does without `ethtool -K tx off`); frames
 * without either are verified in software. Without csum, the stack checks
 * every checksum itself, and frames with unfinished checksums are dropped.
 * csum and tso also turn on PACKET_VNET_HDR: every frame we send carries a
 * virtio-net header (../common/vnet.h) asking the kernel to finish the TCP/UDP
 * checksum or to segment a TSO frame (in software if the device cannot).
 * sg: frames are sent from their segments (the kernel copies).
 *
 * This file is included into the application's translation unit after the
 * stack; it needs libc and pthreads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
#include "fanout.h"
/* the virtio-net header, the same on a packet socket (PACKET_VNET_HDR) as on a tap */
#include "../common/vnet.h"

#include "../common/app_contract.h"
#include "../common/nic_features.h"

#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000 /* Linux 4.20+, missing from older headers */
#endif

#define AFP_MAX_THREADS 64
#define AFP_BLOCK_SIZE (1u << 17)   /* holds a 64 KiB frame with room to spare */
#define AFP_BLOCK_TIMEOUT_MS 1

/* -F bits: the stack's offloads (io/common/nic_features.h) */
#define AFP_F_SG   IO_NIC_F_SG
#define AFP_F_CSUM IO_NIC_F_L4_CSUM
#define AFP_F_TSO  IO_NIC_F_TSO

struct afp_thread {
	uint16_t index, core;
	int fd;
	pthread_t th;
	uint8_t *ring;
	size_t ring_len;
	uint32_t block;             /* the block we read next */
	struct tpacket3_hdr *next;  /* next frame of that block, when in the middle of it */
	uint32_t left;              /* frames of that block not read yet */
	void *workspace, *conns, *pbs;
	struct io_pkt_pool pool;
	void *opaque[3];            /* [0] this thread, [1] app global, [2] app thread */
	struct io_pkt **tx;
	uint32_t ntx;
	struct io_pkt **rx;
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t rx_drop_nobuf, rx_drop_trunc, rx_outgoing, rx_missteered, tx_drop_error;
	uint64_t rx_csum_valid, rx_csum_notready, rx_sw_verified;
	struct io_vnet_stats vnet;  /* transmit side of the virtio-net header */
};

struct afp_conf {
	char ifname[IFNAMSIZ];
	int ifindex;
	uint32_t ip4_be;
	int ip_set;
	uint8_t mac[6];
	int mac_set;
	struct io_corelist cores;
	uint32_t wait_ms;
	uint32_t features;
	uint16_t mtu;
	uint32_t nbufs, nconn, npb, batch, ring_kib;
};

static struct {
	struct afp_conf conf;
	struct afp_thread *threads;
	uint16_t nthreads;
	int vnet_hdr;               /* PACKET_VNET_HDR: csum or tso */
	void *app_global;
	volatile sig_atomic_t stop;
} afp;

#define IO_PKT_POOL_OF(opaque) (&((struct afp_thread *) ((void **) (opaque))[0])->pool)
#include "../common/pkt_ops.h"
#include "../common/eth_ops.h"

static struct afp_thread *afp_thread_of(void *opaque)
{
	return (struct afp_thread *) ((void **) opaque)[0];
}

/* ---- L2 and NIC callbacks ---------------------------------------------------- */

/* a packet socket sees every frame of the interface (all of them when
 * promiscuous): only ours and broadcast/multicast go to the stack */
static uint8_t iip_ops_l2_skip(void *pkt, void *opaque)
{
	(void) opaque;
	return io_eth_not_for((const struct io_pkt *) pkt, afp.conf.mac);
}

static uint32_t io_nic_features(void *opaque)
{
	(void) opaque;
	return afp.conf.features;
}

/* the thread whose socket the fanout program hands this flow to */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	(void) opaque;
	return io_flow_hash_member(protocol, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be, afp.nthreads);
}

/* ---- transmit ------------------------------------------------------------------ */

static void afp_send_frame(struct afp_thread *t, struct io_pkt *frame)
{
	struct iovec iov[1 + 64];
	struct virtio_net_hdr vh;
	struct msghdr msg;
	struct io_pkt *s;
	size_t n = 0, len = 0;
	if (afp.vnet_hdr) {
		if (io_vnet_tx_fill(&vh, frame, afp.conf.mtu, &t->vnet)) {
			t->tx_drop_error++;
			return;
		}
		iov[n].iov_base = &vh;
		iov[n++].iov_len = sizeof(vh);
	}
	for (s = frame; s; s = s->next) {
		if (n == sizeof(iov) / sizeof(iov[0])) {
			t->tx_drop_error++;
			return;
		}
		iov[n].iov_base = s->data;
		iov[n++].iov_len = s->len;
		len += s->len;
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = n;
	/* the socket is bound to the interface: no address needed */
	if (sendmsg(t->fd, &msg, MSG_DONTWAIT) < 0) {
		t->tx_drop_error++; /* ENOBUFS/EAGAIN (queue full), EMSGSIZE, ENETDOWN: a NIC drops too */
		return;
	}
	t->tx_frames++;
	t->tx_bytes += len;
}

static void iip_ops_l2_flush(void *opaque)
{
	struct afp_thread *t = afp_thread_of(opaque);
	uint32_t i;
	for (i = 0; i < t->ntx; i++) {
		afp_send_frame(t, t->tx[i]);
		io_pkt_free(t->tx[i]); /* the kernel copied it */
	}
	t->ntx = 0;
}

static void iip_ops_l2_push(void *pkt, void *opaque)
{
	struct afp_thread *t = afp_thread_of(opaque);
	if (t->ntx == afp.conf.batch)
		iip_ops_l2_flush(opaque);
	t->tx[t->ntx++] = (struct io_pkt *) pkt;
}

/* ---- receive ------------------------------------------------------------------- */

/* copies one frame into buffers of the pool (a chain if it needs more than one) */
static struct io_pkt *afp_copy_frame(struct afp_thread *t, const uint8_t *f, uint32_t len)
{
	struct io_pkt *head = NULL, *tail = NULL;
	uint32_t off = 0;
	while (off < len) {
		struct io_pkt *p = io_pkt_alloc(&t->pool);
		uint32_t k;
		if (!p) {
			io_pkt_free(head);
			return NULL;
		}
		k = io_pkt_room(p);
		if (k > len - off)
			k = len - off;
		memcpy(p->data, f + off, k);
		io_pkt_set_len(p, k);
		if (tail)
			tail->next = p;
		else
			head = p;
		tail = p;
		off += k;
	}
	return head;
}

static void afp_note_checksum(struct afp_thread *t, struct io_pkt *p, uint32_t status)
{
	p->flags = 0;
	if (!(afp.conf.features & AFP_F_CSUM))
		return;
	if (status & (TP_STATUS_CSUM_VALID | TP_STATUS_CSUMNOTREADY)) {
		if (status & TP_STATUS_CSUM_VALID)
			t->rx_csum_valid++;
		else
			t->rx_csum_notready++;
		p->flags |= IO_PKT_F_RX_TCP_GOOD | IO_PKT_F_RX_UDP_GOOD;
		return;
	}
	io_pkt_rx_verify_checksums(p);
	t->rx_sw_verified++;
}

static struct tpacket_block_desc *afp_block(struct afp_thread *t, uint32_t i)
{
	return (struct tpacket_block_desc *) (t->ring + (size_t) i * AFP_BLOCK_SIZE);
}

/* frames out of the ring, block by block; a block goes back to the kernel
 * once every frame in it was copied */
static uint16_t afp_rx_burst(struct afp_thread *t)
{
	uint32_t nblocks = (uint32_t) (t->ring_len / AFP_BLOCK_SIZE);
	uint16_t n = 0;
	while (n < afp.conf.batch) {
		struct tpacket_block_desc *bd = afp_block(t, t->block);
		struct tpacket3_hdr *h;
		if (!t->next) {
			if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
				break;
			t->left = bd->hdr.bh1.num_pkts;
			t->next = (struct tpacket3_hdr *) ((uint8_t *) bd + bd->hdr.bh1.offset_to_first_pkt);
		}
		while (t->left && n < afp.conf.batch) {
			const struct sockaddr_ll *sll;
			struct io_pkt *p;
			h = t->next;
			sll = (const struct sockaddr_ll *) ((uint8_t *) h + TPACKET_ALIGN(sizeof(struct tpacket3_hdr)));
			t->next = (struct tpacket3_hdr *) ((uint8_t *) h + h->tp_next_offset);
			t->left--;
			if (sll->sll_pkttype == PACKET_OUTGOING) { /* our own frames, if the kernel shows them */
				t->rx_outgoing++;
				continue;
			}
			if (h->tp_snaplen != h->tp_len) {
				t->rx_drop_trunc++;
				continue;
			}
			p = afp_copy_frame(t, (const uint8_t *) h + h->tp_mac, h->tp_snaplen);
			if (!p) {
				t->rx_drop_nobuf++;
				continue;
			}
			if (afp.nthreads > 1 &&
			    io_flow_hash_member_of_frame(p->data, p->len, afp.nthreads) != t->index)
				t->rx_missteered++;
			afp_note_checksum(t, p, h->tp_status);
			t->rx[n++] = p;
			t->rx_frames++;
			t->rx_bytes += h->tp_snaplen;
		}
		if (!t->left) {
			__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
			t->next = NULL;
			t->block = (t->block + 1) % nblocks;
		}
	}
	return n;
}

/* ---- the thread ------------------------------------------------------------------ */

static void *afp_thread_main(void *arg)
{
	struct afp_thread *t = arg;
	const struct afp_conf *c = &afp.conf;
	uint8_t mac[6];
	memcpy(mac, c->mac, 6);
	t->opaque[2] = __app_thread_init(t->workspace, t->index, t->opaque); /* the thread index, as seed 003 */
	while (!afp.stop && !__app_should_stop(t->opaque)) {
		uint32_t next_us = 1000000;
		uint16_t n = afp_rx_burst(t);
		iip_run(t->workspace, mac, c->ip4_be, (void **) t->rx, n, &next_us, t->opaque);
		__app_loop(t->workspace, mac, c->ip4_be, &next_us, t->opaque);
		iip_ops_l2_flush(t->opaque);
		if (!n)
			io_wait_readable(t->fd, afp.conf.wait_ms, next_us);
	}
	return NULL;
}

/* ---- options ------------------------------------------------------------------------ */

static void afp_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -i IFNAME [af_packet options] -- [app options]\n"
		"  -i IFNAME    interface to use (it must exist and be up)\n"
		"  -a IP        the stack's IPv4 address (default: the interface's; then the kernel\n"
		"               answers too, so prefer an interface without address and -a)\n"
		"  -M MAC       the stack's MAC (default: the interface's; another one turns on\n"
		"               promiscuous mode)\n"
		"  -l CORES     one thread (and one packet socket, fanout member) per core (default 0)\n"
		"  -e MS        longest wait for frames when idle; 0 = busy poll (default 10)\n"
		"  -F LIST      offloads: comma list of sg,csum,tso or none (default none);\n"
		"               csum and tso use the virtio-net header (PACKET_VNET_HDR)\n"
		"  -m MTU       IP MTU (default: the interface's)\n"
		"  -b N         packet buffers per thread (default 16384)\n"
		"  -c N         TCP connections per thread (default 4096)\n"
		"  -p N         stack packet wrappers per thread (default 65536)\n"
		"  -q N         rx/tx batch (default 256)\n"
		"  -B KIB       receive ring per thread in KiB, a multiple of 128 (default 8192)\n"
		"  -h           this help\n",
		prog);
}

static int afp_bad(const char *prog, int opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: invalid -%c '%s': %s\n", prog, opt, arg ? arg : "", why);
	afp_usage(stderr, prog);
	return -1;
}

static const struct io_args_flag afp_feature_names[] = {
	{ "sg", AFP_F_SG },
	{ "csum", AFP_F_CSUM },
	{ "tso", AFP_F_TSO },
	{ NULL, 0 },
};

static int afp_parse_options(int n, char *const *argv, struct afp_conf *c)
{
	const char *prog = argv[0];
	char err[256];
	struct in_addr a;
	uint32_t v;
	int opt;
	memset(c, 0, sizeof(*c));
	c->wait_ms = 10;
	c->nbufs = 16384;
	c->nconn = 4096;
	c->npb = 65536;
	c->batch = 256;
	c->ring_kib = 8192;
	c->cores.count = 1;
	c->cores.cores[0] = 0;
	optind = 1;
	opterr = 0;
	while ((opt = getopt(n, argv, ":i:a:M:l:e:F:m:b:c:p:q:B:h")) != -1) {
		switch (opt) {
		case 'i':
			if (!optarg[0] || strlen(optarg) >= IFNAMSIZ || strchr(optarg, '/') || strchr(optarg, ' '))
				return afp_bad(prog, opt, optarg, "an interface name of 1..15 characters");
			strcpy(c->ifname, optarg);
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return afp_bad(prog, opt, optarg, "an IPv4 address");
			c->ip4_be = a.s_addr;
			c->ip_set = 1;
			break;
		case 'M':
			if (io_args_mac(optarg, c->mac))
				return afp_bad(prog, opt, optarg, "a unicast MAC such as 02:00:00:00:00:01");
			c->mac_set = 1;
			break;
		case 'l':
			if (io_corelist_parse(optarg, &c->cores, err, sizeof(err)))
				return afp_bad(prog, opt, optarg, err);
			if (c->cores.count > AFP_MAX_THREADS)
				return afp_bad(prog, opt, optarg, "at most 64 cores");
			break;
		case 'e':
			if (io_args_u32(optarg, 0, 60000, &c->wait_ms))
				return afp_bad(prog, opt, optarg, "milliseconds 0..60000");
			break;
		case 'F':
			if (io_args_flags(optarg, afp_feature_names, &c->features))
				return afp_bad(prog, opt, optarg, "comma list of sg,csum,tso or none");
			break;
		case 'm':
			if (io_args_u32(optarg, 68, 65000, &v))
				return afp_bad(prog, opt, optarg, "68..65000");
			c->mtu = (uint16_t) v;
			break;
		case 'b': if (io_args_u32(optarg, 256, 1u << 24, &c->nbufs)) return afp_bad(prog, opt, optarg, "256..16777216"); break;
		case 'c': if (io_args_u32(optarg, 1, 1u << 22, &c->nconn)) return afp_bad(prog, opt, optarg, "1..4194304"); break;
		case 'p': if (io_args_u32(optarg, 64, 1u << 24, &c->npb)) return afp_bad(prog, opt, optarg, "64..16777216"); break;
		case 'q': if (io_args_u32(optarg, 1, 4096, &c->batch)) return afp_bad(prog, opt, optarg, "1..4096"); break;
		case 'B':
			if (io_args_u32(optarg, 256, 1u << 22, &c->ring_kib) || c->ring_kib % (AFP_BLOCK_SIZE / 1024))
				return afp_bad(prog, opt, optarg, "KiB, a multiple of 128, 256..4194304");
			break;
		case 'h': afp_usage(stdout, prog); exit(0);
		default: /* ':' or '?' */
			io_args_getopt_error(prog, opt);
			afp_usage(stderr, prog);
			return -1;
		}
	}
	if (io_args_no_operands(prog, n, argv)) {
		afp_usage(stderr, prog);
		return -1;
	}
	if (!c->ifname[0]) {
		fprintf(stderr, "%s: -i IFNAME is required\n", prog);
		afp_usage(stderr, prog);
		return -1;
	}
	if ((c->features & AFP_F_TSO) && !(c->features & AFP_F_CSUM)) {
		fprintf(stderr, "%s: -F tso needs csum (segmentation fills the checksums)\n", prog);
		return -1;
	}
	return 0;
}

/* ---- the interface and the sockets --------------------------------------------------- */

/* MAC, MTU, address (when not given), up or not; prints why it failed */
static int afp_query_interface(const char *prog, int *ip_from_kernel)
{
	const char *name = afp.conf.ifname;
	uint8_t mac[6];
	*ip_from_kernel = 0;
	if (io_if_mac(name, mac)) {
		fprintf(stderr, "%s: interface %s: %s\n", prog, name, errno == ENODEV ? "no such interface" : strerror(errno));
		return -1;
	}
	if (!afp.conf.mac_set)
		memcpy(afp.conf.mac, mac, 6);
	if (!afp.conf.mtu)
		afp.conf.mtu = io_if_mtu_or(name, 1500);
	if (!afp.conf.ip_set) {
		if (io_if_ip4(name, &afp.conf.ip4_be)) {
			fprintf(stderr, "%s: interface %s has no IPv4 address: give the stack one with -a\n", prog, name);
			return -1;
		}
		*ip_from_kernel = 1;
	}
	if (io_if_is_up(name) == 0)
		fprintf(stderr, "%s: warning: %s is down (ip link set %s up)\n", prog, name, name);
	return 0;
}

static int afp_open_socket(const char *prog, struct afp_thread *t, int fanout_id)
{
	struct tpacket_req3 req;
	struct sockaddr_ll sll;
	int v = TPACKET_V3, one = 1;
	t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (t->fd < 0) {
		if (errno == EPERM || errno == EACCES)
			fprintf(stderr, "%s: cannot open a packet socket: %s (run as root: needs CAP_NET_RAW)\n", prog,
				strerror(errno));
		else
			fprintf(stderr, "%s: cannot open a packet socket: %s\n", prog, strerror(errno));
		return -1;
	}
	if (setsockopt(t->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) {
		fprintf(stderr, "%s: TPACKET_V3: %s\n", prog, strerror(errno));
		return -1;
	}
	/* our own transmissions are not for us (if unsupported, the ring's
	 * PACKET_OUTGOING mark still filters them) */
	(void) setsockopt(t->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	/* before the ring: the kernel refuses it afterwards */
	if (afp.vnet_hdr && setsockopt(t->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0) {
		fprintf(stderr, "%s: PACKET_VNET_HDR (needed by -F csum/tso): %s\n", prog, strerror(errno));
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.tp_block_size = AFP_BLOCK_SIZE;
	req.tp_block_nr = afp.conf.ring_kib / (AFP_BLOCK_SIZE / 1024);
	req.tp_frame_size = 2048;
	req.tp_frame_nr = req.tp_block_size / req.tp_frame_size * req.tp_block_nr;
	req.tp_retire_blk_tov = AFP_BLOCK_TIMEOUT_MS;
	if (setsockopt(t->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		fprintf(stderr, "%s: PACKET_RX_RING (%u KiB): %s\n", prog, afp.conf.ring_kib, strerror(errno));
		return -1;
	}
	t->ring_len = (size_t) req.tp_block_size * req.tp_block_nr;
	t->ring = mmap(NULL, t->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED | MAP_POPULATE, t->fd, 0);
	if (t->ring == MAP_FAILED) /* MAP_LOCKED may exceed RLIMIT_MEMLOCK: try without */
		t->ring = mmap(NULL, t->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		t->ring = NULL;
		fprintf(stderr, "%s: mmap of the ring: %s\n", prog, strerror(errno));
		return -1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = afp.conf.ifindex;
	if (bind(t->fd, (struct sockaddr *) &sll, sizeof(sll)) < 0) {
		fprintf(stderr, "%s: bind to %s: %s\n", prog, afp.conf.ifname, strerror(errno));
		return -1;
	}
	if (afp.conf.mac_set) { /* frames for a MAC the interface does not have */
		struct packet_mreq mr;
		memset(&mr, 0, sizeof(mr));
		mr.mr_ifindex = afp.conf.ifindex;
		mr.mr_type = PACKET_MR_PROMISC;
		if (setsockopt(t->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
			fprintf(stderr, "%s: promiscuous mode on %s: %s\n", prog, afp.conf.ifname, strerror(errno));
			return -1;
		}
	}
	if (afp.nthreads > 1) {
		int arg = fanout_id | ((PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_IGNORE_OUTGOING) << 16);
		if (setsockopt(t->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0) {
			arg = fanout_id | (PACKET_FANOUT_CBPF << 16); /* kernels without the flag */
			if (setsockopt(t->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0) {
				fprintf(stderr, "%s: PACKET_FANOUT: %s\n", prog, strerror(errno));
				return -1;
			}
		}
		if (t->index == 0) {
			struct sock_filter prog_insns[32];
			struct sock_fprog fp;
			fp.len = afp_fanout_program(prog_insns, afp.nthreads);
			fp.filter = prog_insns;
			if (setsockopt(t->fd, SOL_PACKET, PACKET_FANOUT_DATA, &fp, sizeof(fp)) < 0) {
				fprintf(stderr, "%s: fanout program: %s\n", prog, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* ---- setup and teardown --------------------------------------------------------------- */

static int afp_thread_setup(const char *prog, struct afp_thread *t)
{
	const struct afp_conf *c = &afp.conf;
	uint32_t bufsize = c->mtu + 14u + IO_PKT_ALIGN_PAD + 64u;
	t->opaque[0] = t;
	t->opaque[1] = afp.app_global;
	if (bufsize < 2048)
		bufsize = 2048;
	if (bufsize > 16384)
		bufsize = 16384;
	if (io_pkt_pool_init(&t->pool, c->nbufs * 2u, c->nbufs, bufsize, 0, 0)) {
		fprintf(stderr, "%s: thread %u: cannot allocate %u packet buffers\n", prog, t->index, c->nbufs);
		return -1;
	}
	t->tx = calloc(c->batch, sizeof(*t->tx));
	t->rx = calloc(c->batch, sizeof(*t->rx));
	if (io_stack_create(&t->workspace, &t->conns, c->nconn, &t->pbs, c->npb) || !t->tx || !t->rx) {
		fprintf(stderr, "%s: thread %u: out of memory\n", prog, t->index);
		return -1;
	}
	iip_set_mtu(t->workspace, c->mtu);
	return io_stack_random_isn_secret(t->workspace, prog);
}

static void afp_thread_teardown(struct afp_thread *t)
{
	if (t->ring)
		munmap(t->ring, t->ring_len);
	if (t->fd >= 0)
		close(t->fd);
	free(t->workspace);
	free(t->conns);
	free(t->pbs);
	free(t->tx);
	free(t->rx);
	io_pkt_pool_destroy(&t->pool);
}

static void afp_on_signal(int sig)
{
	(void) sig;
	afp.stop = 1;
}

static void afp_print_stats(void)
{
	uint16_t i;
	for (i = 0; i < afp.nthreads; i++) {
		struct afp_thread *t = &afp.threads[i];
		char name[64];
		printf("af_packet: thread %u (core %u): rx %llu frames %llu bytes, tx %llu frames %llu bytes, "
		       "dropped: rx-nobuf %llu rx-truncated %llu tx-error %llu; outgoing seen %llu, mis-steered %llu; "
		       "rx checksum: valid %llu not-ready %llu sw %llu\n",
		       i, t->core, (unsigned long long) t->rx_frames, (unsigned long long) t->rx_bytes,
		       (unsigned long long) t->tx_frames, (unsigned long long) t->tx_bytes,
		       (unsigned long long) t->rx_drop_nobuf, (unsigned long long) t->rx_drop_trunc,
		       (unsigned long long) t->tx_drop_error, (unsigned long long) t->rx_outgoing,
		       (unsigned long long) t->rx_missteered, (unsigned long long) t->rx_csum_valid,
		       (unsigned long long) t->rx_csum_notready, (unsigned long long) t->rx_sw_verified);
		if (afp.vnet_hdr)
			printf("af_packet: thread %u: vnet: tx csum %llu tso %llu pseudo-fixed %llu bad %llu\n", i,
			       (unsigned long long) t->vnet.tx_csum, (unsigned long long) t->vnet.tx_tso,
			       (unsigned long long) t->vnet.tx_pseudo_fixed, (unsigned long long) t->vnet.tx_bad);
		io_stack_print_counters("af_packet", i, t->workspace);
		snprintf(name, sizeof(name), "af_packet: thread %u", i);
		io_pkt_pool_report(&t->pool, stdout, name); /* open connections hold packets: informational */
	}
}

static int __iosub_main(int argc, char *const *argv)
{
	const char *prog = argc > 0 ? argv[0] : "af_packet";
	int nopt, rc = 0, ip_from_kernel;
	uint16_t i;
	char ip[INET_ADDRSTRLEN], cores[128];
	struct sigaction sa;

	IO_STACK_CALLS_MAY_GO_UNUSED();
	if (argc < 1)
		return 2;
	nopt = io_args_backend_end(argc, argv);
	if (afp_parse_options(nopt, argv, &afp.conf))
		return 2;
	afp.nthreads = afp.conf.cores.count;
	afp.vnet_hdr = (afp.conf.features & (AFP_F_CSUM | AFP_F_TSO)) != 0;
	if (io_threads_check_cores(prog, &afp.conf.cores))
		return 2;
	afp.conf.ifindex = (int) if_nametoindex(afp.conf.ifname);
	if (!afp.conf.ifindex) {
		fprintf(stderr, "%s: interface %s does not exist\n", prog, afp.conf.ifname);
		return 2;
	}
	if (afp_query_interface(prog, &ip_from_kernel))
		return 2;
	afp.threads = calloc(afp.nthreads, sizeof(*afp.threads));
	if (!afp.threads)
		return 2;
	for (i = 0; i < afp.nthreads; i++) {
		afp.threads[i].fd = -1;
		afp.threads[i].index = i;
		afp.threads[i].core = afp.conf.cores.cores[i];
	}
	/* sockets in thread order: fanout members are numbered as they join */
	for (i = 0; i < afp.nthreads; i++) {
		if (afp_open_socket(prog, &afp.threads[i], (int) (getpid() & 0xffff))) {
			rc = 2;
			goto out;
		}
	}
	inet_ntop(AF_INET, &afp.conf.ip4_be, ip, sizeof(ip));
	io_corelist_format(&afp.conf.cores, cores, sizeof(cores));
	printf("af_packet: %s, %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, %u thread(s) on cores %s, "
	       "offloads %s%s%s%s, ring %u KiB per thread, wait %u ms%s\n",
	       afp.conf.ifname, ip, afp.conf.mac[0], afp.conf.mac[1], afp.conf.mac[2], afp.conf.mac[3],
	       afp.conf.mac[4], afp.conf.mac[5], afp.conf.mtu, afp.nthreads, cores,
	       afp.conf.features ? "" : "none", (afp.conf.features & AFP_F_SG) ? "sg " : "",
	       (afp.conf.features & AFP_F_CSUM) ? "csum " : "", (afp.conf.features & AFP_F_TSO) ? "tso" : "",
	       afp.conf.ring_kib, afp.conf.wait_ms,
	       afp.conf.wait_ms ? "" : " (busy poll)");
	if (ip_from_kernel)
		fprintf(stderr, "%s: warning: %s is the kernel's address on %s: the kernel will answer too "
				"(e.g. RST to our TCP peers); prefer -a with an address the kernel does not have\n",
			prog, ip, afp.conf.ifname);
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = afp_on_signal;
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
		afp.app_global = __app_init(app_argc, app_argv);
		free(app_argv);
	}
	for (i = 0; i < afp.nthreads; i++) {
		if (afp_thread_setup(prog, &afp.threads[i])) {
			rc = 2;
			goto out;
		}
	}
	for (i = 0; i < afp.nthreads; i++) {
		struct afp_thread *t = &afp.threads[i];
		if (io_threads_start_pinned(prog, &t->th, afp_thread_main, t, i, t->core)) {
			afp.stop = 1;
			afp.nthreads = i;
			rc = 2;
			break;
		}
	}
	for (i = 0; i < afp.nthreads; i++)
		pthread_join(afp.threads[i].th, NULL);
	__app_exit(afp.app_global);
	afp_print_stats();
out:
	for (i = 0; i < afp.conf.cores.count; i++)
		afp_thread_teardown(&afp.threads[i]);
	free(afp.threads);
	fflush(stdout);
	return rc;
}
