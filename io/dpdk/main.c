/*
 * io/dpdk/main.c — the DPDK backend: the stack on DPDK ports, one thread
 * per EAL lcore, each with its own queue pair on every port.
 *
 * Command line (COMPAT.md section 3, seed 003's iip-dpdk shape):
 *   app [EAL options] -- -a PORT,IP [-a PORT,IP ...] [-e MS] [options] -- [app options]
 * e.g.
 *   app -l 0-1 --no-huge -m 1024 --vdev=net_tap0,iface=dtap0 -- -a 0,10.0.0.2 -- -p 80
 * The EAL options go to rte_eal_init unchanged; thread i runs on the i-th
 * lcore of -l (the main lcore first) and serves queue i of every port;
 * __app_thread_init gets i as core_id. See README.md for every option.
 *
 * Per thread and loop iteration:
 *   receive   rte_eth_rx_burst on each port; frames of another thread's
 *             flows move to that thread (steer.h), frames steered to us
 *             are taken in;
 *   run       per port: iip_run with that port's frames, MAC and address,
 *             then __app_loop with the same MAC and address (so with one
 *             port, exactly once per iteration, as the contract says);
 *   transmit  the frames the stack pushed, per port (tx.h);
 *   wait      busy poll by default; with -e MS, sleep on receive
 *             interrupts up to min(next_us, MS) when idle (wait.h).
 *
 * Packets are mbufs (mbuf_ops.h); offloads and RSS per port (port.h).
 * This file is included into the application's translation unit after the
 * stack; it needs DPDK (build.mk).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../common/rss.h"
#include "../common/pcap.h"
#include "../common/args.h"
#include "../common/clock.h"
#include "../common/stack_setup.h"

#include "../common/app_contract.h"

#define DPK_MAX_PORTS 16
#define DPK_MAX_THREADS 128
#define DPK_BURST_MAX 64
#define DPK_RX_CAP (4 * DPK_BURST_MAX)   /* frames per port waiting for iip_run */
#define DPK_TXBUF 1024                   /* frames per port waiting for the queue */
#define DPK_NAP_US 100                   /* longest idle wait when a port cannot interrupt */
#define DPK_POOL_CACHE 256
#define DPK_TX_STUCK_NS 20000000u        /* a queue that takes nothing this long drops a frame */

/* -x: offloads to leave off */
#define DPK_OFF_RX_CSUM (1u << 0)
#define DPK_OFF_TX_CSUM (1u << 1)
#define DPK_OFF_TSO (1u << 2)
#define DPK_OFF_SG (1u << 3)
#define DPK_OFF_LRO (1u << 4)
#define DPK_OFF_RSS (1u << 5)

struct dpk_conf {
	uint16_t port_ids[DPK_MAX_PORTS];
	uint32_t port_ip4_be[DPK_MAX_PORTS];
	uint16_t nports;
	uint32_t poll_ms;        /* -e: 0 = busy poll */
	uint16_t rxd, txd;
	uint16_t burst;
	uint32_t mbufs_per_thread;
	uint32_t buf_size;       /* -s: data bytes per mbuf, 0 = from the MTU */
	uint32_t nconn, npb;
	uint32_t disable;        /* DPK_OFF_* */
	const char *pcap_path;
};

struct dpk_port {
	uint16_t id;
	uint32_t ip4_be;
	struct rte_ether_addr mac;
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *driver;
	uint16_t mtu;
	uint16_t rxd, txd;
	struct rte_eth_dev_info info;
	uint64_t rx_offloads, tx_offloads;   /* turned on */
	int tso_quirk_l2_in_mtu;             /* port.h */
	int rss_hw, rss_verified;
	char rss_why[128];
	struct io_rss rss;                   /* which thread each flow belongs to */
	int rx_intr;
	const char *rx_intr_why;
	int started;
};

struct dpk_txbuf {
	uint16_t n;
	uint64_t stuck_since_ns;             /* the queue has taken nothing since */
	struct rte_mbuf *m[DPK_TXBUF];
};

struct dpk_stats {
	uint64_t rx_frames, rx_bytes, rx_ip4_good, rx_l4_good, rx_csum_bad, rx_lro, rx_multiseg;
	uint64_t tx_frames, tx_bytes, tx_ip4_csum, tx_tcp_csum, tx_udp_csum, tx_tso, tx_tso_bytes;
	uint64_t tx_multiseg, tx_linearized, tx_phdr_ok, tx_phdr_mismatch;
	uint64_t tx_drop_bad, tx_drop_full, tx_drop_stuck, tx_prepare_refused, tx_mark_unsupported;
	uint64_t steer_out, steer_in, steer_drop_full, steer_drop_nobuf;
	uint64_t iterations, sleeps, rx_wakeups, steer_wakeups, wake_errors;
};

struct dpk_thread {
	uint16_t index;
	unsigned lcore, socket;
	struct rte_mempool *pool, *clone_pool;
	void *workspace, *conns, *pbs;
	void *opaque[3];                     /* [0] this thread, [1] app global, [2] app thread */
	uint16_t cur_port;                   /* the port of the iip_run in progress */
	struct rte_mbuf *rx[DPK_MAX_PORTS][DPK_RX_CAP];
	uint16_t nrx[DPK_MAX_PORTS];
	struct dpk_txbuf tx[DPK_MAX_PORTS];
	struct rte_ring *inbox;              /* frames other threads steered here */
	int efd, epfd, nap_only;
	atomic_int sleeping;
	struct dpk_stats st;
};

struct dpk_features {
	uint8_t rx_ip4, rx_tcp, rx_udp, lro, tx_ip4, tx_tcp, tx_udp, tx_sg, tx_tso;
};

struct dpk_state {
	struct dpk_conf conf;
	struct dpk_port ports[DPK_MAX_PORTS];
	uint16_t nports;
	int16_t port_index[RTE_MAX_ETHPORTS];  /* port id -> index in ports[], -1 */
	struct dpk_thread *threads;
	uint16_t nthreads;
	struct rte_mempool *pools[RTE_MAX_NUMA_NODES], *clone_pools[RTE_MAX_NUMA_NODES];
	uint32_t buf_room;                     /* data bytes of one mbuf */
	uint16_t mtu;                          /* the stack's: the smallest port MTU */
	struct dpk_features feat;
	atomic_int stop;
	struct io_pcap pcap;
	int pcap_on;
	pthread_mutex_t pcap_lock;
	uint64_t pcap_epoch_ns;
	int eal_up;
	char **args, **app_argv;               /* copies of argv for EAL / getopt and for the app */
};

static struct dpk_state dpk;

static inline struct dpk_thread *dpk_thread_of(void *opaque)
{
	return (struct dpk_thread *) ((void **) opaque)[0];
}

static inline const struct dpk_port *dpk_port_by_id(uint16_t id)
{
	if (id >= RTE_MAX_ETHPORTS || dpk.port_index[id] < 0)
		return NULL;
	return &dpk.ports[dpk.port_index[id]];
}

#include "mbuf_ops.h"
#include "port.h"
#include "steer.h"
#include "tx.h"
#include "wait.h"

/* ---- flow affinity ------------------------------------------------------------ */

/*
 * The thread that receives a flow's packets: with one thread 0; otherwise
 * the Toeplitz model of the port that owns local_ip4_be, which is what the
 * receive path steers by (port.h, steer.h), whatever the device does.
 * UINT16_MAX for an address no port has.
 */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	uint16_t i;
	(void) opaque;
	if (dpk.nthreads <= 1)
		return 0;
	for (i = 0; i < dpk.nports; i++)
		if (dpk.ports[i].ip4_be == local_ip4_be)
			return io_rss_queue_for_flow(protocol, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be,
						     &dpk.ports[i].rss);
	return UINT16_MAX;
}

/* ---- pcap ------------------------------------------------------------------- */

static void dpk_capture(const struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	if (!dpk.pcap_on)
		return;
	pthread_mutex_lock(&dpk.pcap_lock);
	io_pcap_begin(&dpk.pcap, dpk.pcap_epoch_ns + io_clock_now_ns(), m->pkt_len);
	for (s = m; s; s = s->next)
		io_pcap_append(&dpk.pcap, rte_pktmbuf_mtod(s, const void *), s->data_len);
	io_pcap_end(&dpk.pcap);
	pthread_mutex_unlock(&dpk.pcap_lock);
}

/* ---- receive ------------------------------------------------------------------ */

static void dpk_rx_account(struct dpk_thread *t, const struct rte_mbuf *m)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	t->st.rx_frames++;
	t->st.rx_bytes += m->pkt_len;
	if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
		t->st.rx_ip4_good++;
	if (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD || l4 == RTE_MBUF_F_RX_L4_CKSUM_NONE)
		t->st.rx_l4_good++;
	if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD ||
	    (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD)
		t->st.rx_csum_bad++;
	if (m->ol_flags & RTE_MBUF_F_RX_LRO)
		t->st.rx_lro++;
	if (m->nb_segs > 1)
		t->st.rx_multiseg++;
}

/* frames other threads steered to us, into the batch of their port */
static uint32_t dpk_steer_take(struct dpk_thread *t)
{
	struct rte_mbuf *in[DPK_BURST_MAX];
	uint32_t room = dpk.conf.burst, n, k;
	uint16_t i;
	for (i = 0; i < dpk.nports; i++)
		if ((uint32_t) (DPK_RX_CAP - t->nrx[i]) < room)
			room = (uint32_t) (DPK_RX_CAP - t->nrx[i]);
	n = room ? rte_ring_sc_dequeue_burst(t->inbox, (void **) in, room, NULL) : 0;
	for (k = 0; k < n; k++) {
		int16_t pi = in[k]->port < RTE_MAX_ETHPORTS ? dpk.port_index[in[k]->port] : -1;
		if (pi < 0) {
			rte_pktmbuf_free(in[k]);
			continue;
		}
		t->rx[pi][t->nrx[pi]++] = in[k];
	}
	t->st.steer_in += n;
	return n;
}

/* one receive burst on every port; returns the frames added to the batches */
static uint32_t dpk_receive(struct dpk_thread *t)
{
	struct rte_mbuf *in[DPK_BURST_MAX];
	uint32_t added = 0;
	uint16_t pi, n, k;
	for (pi = 0; pi < dpk.nports; pi++) {
		const struct dpk_port *p = &dpk.ports[pi];
		int room = DPK_RX_CAP - DPK_BURST_MAX - t->nrx[pi];
		if (room <= 0)
			continue;
		n = rte_eth_rx_burst(p->id, t->index, in, (uint16_t) (room < dpk.conf.burst ? room : dpk.conf.burst));
		for (k = 0; k < n; k++) {
			struct rte_mbuf *m = in[k];
			dpk_rx_account(t, m);
			dpk_capture(m);
			if (dpk.nthreads > 1 && !dpk_steer_frame(t, p, m))
				continue;
			t->rx[pi][t->nrx[pi]++] = m;
			added++;
		}
	}
	if (dpk.nthreads > 1)
		added += dpk_steer_take(t);
	return added;
}

/* ---- the per-thread loop ------------------------------------------------------ */

static int dpk_thread_main(void *arg)
{
	struct dpk_thread *t = arg;
	uint64_t poll_cap_us = (uint64_t) dpk.conf.poll_ms * 1000u;
	t->opaque[2] = __app_thread_init(t->workspace, t->index, t->opaque);
	while (!atomic_load(&dpk.stop) && !__app_should_stop(t->opaque)) {
		uint32_t next_us = 1000000, batch = 0;
		uint16_t pi;
		dpk_receive(t);
		for (pi = 0; pi < dpk.nports; pi++) {
			struct dpk_port *p = &dpk.ports[pi];
			uint32_t n_us = 1000000;
			uint16_t n = t->nrx[pi];
			batch += n;
			t->nrx[pi] = 0;
			t->cur_port = pi;
			iip_run(t->workspace, p->mac.addr_bytes, p->ip4_be, (void **) t->rx[pi], n, &n_us, t->opaque);
			__app_loop(t->workspace, p->mac.addr_bytes, p->ip4_be, &n_us, t->opaque);
			if (n_us < next_us)
				next_us = n_us;
		}
		dpk_tx_flush(t);
		t->st.iterations++;
		if (!poll_cap_us || batch || dpk_tx_pending(t))
			continue; /* busy poll, or busy: go round again at once */
		dpk_wait(t, next_us < poll_cap_us ? next_us : poll_cap_us);
	}
	return 0;
}

static void dpk_on_signal(int sig)
{
	(void) sig;
	atomic_store(&dpk.stop, 1);
}

/* ---- options ------------------------------------------------------------------ */

static void dpk_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- -a PORT,IP [-a PORT,IP ...] [dpdk options] -- [app options]\n"
		"EAL options (rte_eal_init): e.g. -l 0-1 (one thread and queue pair per lcore),\n"
		"  --vdev=net_tap0,iface=dtap0 or --vdev=net_af_packet0,iface=eth1, --no-huge -m 1024\n"
		"  (without hugepages), --file-prefix=NAME (to run several DPDK processes)\n"
		"dpdk options:\n"
		"  -a PORT,IP  use DPDK port PORT with IPv4 address IP (repeat for more ports)\n"
		"  -e MS       interrupt mode: when idle, sleep on receive interrupts up to MS ms\n"
		"              (default 0: busy poll)\n"
		"  -x LIST     leave offloads off: rx-csum,tx-csum,tso,sg,lro,rss or all (default: use\n"
		"              every offload the port offers)\n"
		"  -r N, -t N  receive / transmit descriptors per queue (default 1024 / 1024)\n"
		"  -b N        receive burst (default 32, at most %d)\n"
		"  -n N        mbufs per thread (default 16384; each ~2.3 KB of EAL memory)\n"
		"  -s BYTES    data bytes per mbuf (default: one frame of the largest MTU, at least 2048);\n"
		"              net_af_packet with framesz=N needs about N\n"
		"  -c N        TCP connection objects per thread (default 1024)\n"
		"  -p N        packet wrappers per thread (default 16384)\n"
		"  -w FILE     write every received and sent frame to FILE (pcap)\n"
		"  -h          this help\n",
		prog, DPK_BURST_MAX);
}

static long dpk_num(const char *s, long min, long max, const char *what, int *err)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "dpdk: %s \"%s\": expected a number from %ld to %ld\n", what, s, min, max);
		*err = 1;
		return min;
	}
	return v;
}

/* -a PORT,IP */
static int dpk_parse_port(const char *s, struct dpk_conf *c)
{
	const char *comma = strchr(s, ',');
	char num[16];
	struct in_addr a;
	int err = 0;
	long id;
	uint16_t i;
	if (!comma || comma == s || (size_t) (comma - s) >= sizeof(num)) {
		fprintf(stderr, "dpdk: -a \"%s\": expected PORT,IP (e.g. 0,10.0.0.2)\n", s);
		return -1;
	}
	memcpy(num, s, (size_t) (comma - s));
	num[comma - s] = '\0';
	id = dpk_num(num, 0, RTE_MAX_ETHPORTS - 1, "-a port", &err);
	if (err)
		return -1;
	if (inet_pton(AF_INET, comma + 1, &a) != 1 || a.s_addr == 0 || a.s_addr == 0xffffffffu) {
		fprintf(stderr, "dpdk: -a \"%s\": \"%s\" is not a usable IPv4 address\n", s, comma + 1);
		return -1;
	}
	if (c->nports == DPK_MAX_PORTS) {
		fprintf(stderr, "dpdk: at most %d ports (-a)\n", DPK_MAX_PORTS);
		return -1;
	}
	for (i = 0; i < c->nports; i++) {
		if (c->port_ids[i] == id) {
			fprintf(stderr, "dpdk: port %ld given twice (-a)\n", id);
			return -1;
		}
		if (c->port_ip4_be[i] == a.s_addr) {
			fprintf(stderr, "dpdk: address %s given to two ports (-a)\n", comma + 1);
			return -1;
		}
	}
	c->port_ids[c->nports] = (uint16_t) id;
	c->port_ip4_be[c->nports] = a.s_addr;
	c->nports++;
	return 0;
}

static int dpk_parse_disable(const char *s, uint32_t *out)
{
	char buf[256], *tok, *save = NULL;
	if (strlen(s) >= sizeof(buf)) {
		fprintf(stderr, "dpdk: -x \"%s\": too long\n", s);
		return -1;
	}
	strcpy(buf, s);
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "rx-csum")) *out |= DPK_OFF_RX_CSUM;
		else if (!strcmp(tok, "tx-csum")) *out |= DPK_OFF_TX_CSUM | DPK_OFF_TSO;
		else if (!strcmp(tok, "tso")) *out |= DPK_OFF_TSO;
		else if (!strcmp(tok, "sg")) *out |= DPK_OFF_SG | DPK_OFF_TSO;
		else if (!strcmp(tok, "lro")) *out |= DPK_OFF_LRO;
		else if (!strcmp(tok, "rss")) *out |= DPK_OFF_RSS;
		else if (!strcmp(tok, "all")) *out = ~0u;
		else {
			fprintf(stderr, "dpdk: -x: unknown offload \"%s\" (rx-csum, tx-csum, tso, sg, lro, rss, all)\n", tok);
			return -1;
		}
	}
	return 0;
}

/* argv[first .. last) are the backend's options (between the two "--") */
static int dpk_parse_options(int argc, char **argv, struct dpk_conf *c)
{
	int opt, err = 0;
	memset(c, 0, sizeof(*c));
	c->rxd = 1024;
	c->txd = 1024;
	c->burst = 32;
	c->mbufs_per_thread = 16384;
	c->nconn = 1024;
	c->npb = 16384;
	optind = 1;
	opterr = 1;
	while ((opt = getopt(argc, argv, "a:e:x:r:t:b:n:s:c:p:w:h")) != -1) {
		switch (opt) {
		case 'a': if (dpk_parse_port(optarg, c)) return -1; break;
		case 'e': c->poll_ms = (uint32_t) dpk_num(optarg, 0, 3600000, "-e", &err); break;
		case 'x': if (dpk_parse_disable(optarg, &c->disable)) return -1; break;
		case 'r': c->rxd = (uint16_t) dpk_num(optarg, 32, 32768, "-r", &err); break;
		case 't': c->txd = (uint16_t) dpk_num(optarg, 32, 32768, "-t", &err); break;
		case 'b': c->burst = (uint16_t) dpk_num(optarg, 1, DPK_BURST_MAX, "-b", &err); break;
		case 'n': c->mbufs_per_thread = (uint32_t) dpk_num(optarg, 1024, 16777216, "-n", &err); break;
		case 's': c->buf_size = (uint32_t) dpk_num(optarg, 1024, 65000, "-s", &err); break;
		case 'c': c->nconn = (uint32_t) dpk_num(optarg, 1, 1048576, "-c", &err); break;
		case 'p': c->npb = (uint32_t) dpk_num(optarg, 64, 16777216, "-p", &err); break;
		case 'w': c->pcap_path = optarg; break;
		case 'h': dpk_usage(stdout, argv[0]); exit(0);
		default: return -1;
		}
		if (err)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "dpdk: unexpected argument \"%s\" (application options go after a second --)\n",
			argv[optind]);
		return -1;
	}
	if (c->nports == 0) {
		fprintf(stderr, "dpdk: no port: give at least one -a PORT,IP (e.g. -a 0,10.0.0.2)\n");
		return -1;
	}
	return 0;
}

/* ---- checks before EAL: privileges and memory -------------------------------- */

static int dpk_eal_has(int argc, char **argv, const char *opt)
{
	int i;
	size_t n = strlen(opt);
	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], opt, n) && (argv[i][n] == '\0' || argv[i][n] == '='))
			return 1;
	return 0;
}

/* free hugepages of any size; -1 if the kernel has no hugepage support */
static long dpk_free_hugepages(void)
{
	glob_t g;
	long total = 0;
	size_t i;
	if (glob("/sys/kernel/mm/hugepages/hugepages-*/free_hugepages", 0, NULL, &g) != 0)
		return -1;
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		long v = 0;
		if (f) {
			if (fscanf(f, "%ld", &v) == 1 && v > 0)
				total += v;
			fclose(f);
		}
	}
	globfree(&g);
	return total;
}

static int dpk_hugetlbfs_mounted(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/mounts", "r");
	if (!f)
		return 1; /* cannot tell: let EAL decide */
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	return found;
}

static int dpk_prechecks(const char *prog, int eal_argc, char **eal_argv)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: dpdk: must run as root (DPDK maps device and packet memory, and its virtual "
			"devices need CAP_NET_ADMIN / CAP_NET_RAW)\n", prog);
		return -1;
	}
	if (dpk_eal_has(eal_argc, eal_argv, "--no-huge"))
		return 0;
	if (dpk_free_hugepages() <= 0) {
		fprintf(stderr, "%s: dpdk: no free hugepages. Either add --no-huge -m 1024 to the EAL options "
			"(before the first --), or reserve 2 MB pages: echo 1024 > "
			"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (and mount -t hugetlbfs nodev "
			"/dev/hugepages if it is not mounted)\n", prog);
		return -1;
	}
	/* EAL finds hugepages through a hugetlbfs mount, except with --in-memory
	 * (memfd) or a --huge-dir of the user's choosing */
	if (!dpk_eal_has(eal_argc, eal_argv, "--in-memory") && !dpk_eal_has(eal_argc, eal_argv, "--huge-dir") &&
	    !dpk_hugetlbfs_mounted()) {
		fprintf(stderr, "%s: dpdk: hugepages are reserved but no hugetlbfs is mounted: mount -t hugetlbfs nodev "
			"/dev/hugepages (mkdir it first), or add --in-memory, or --no-huge -m 1024 to the EAL options\n",
			prog);
		return -1;
	}
	return 0;
}

/* ---- setup -------------------------------------------------------------------- */

static int dpk_create_pools(const char *prog)
{
	uint32_t per_socket[RTE_MAX_NUMA_NODES] = { 0 };
	uint16_t i;
	unsigned s;
	uint16_t data_room = (uint16_t) (RTE_PKTMBUF_HEADROOM + dpk.buf_room);
	for (i = 0; i < dpk.nthreads; i++)
		per_socket[dpk.threads[i].socket]++;
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		char name[RTE_MEMPOOL_NAMESIZE];
		uint32_t n = per_socket[s] * dpk.conf.mbufs_per_thread;
		if (!n)
			continue;
		snprintf(name, sizeof(name), "iip_pkt_s%u", s);
		dpk.pools[s] = rte_pktmbuf_pool_create(name, n, DPK_POOL_CACHE, 0, data_room, (int) s);
		if (!dpk.pools[s]) /* no memory on that socket (e.g. --no-huge): anywhere */
			dpk.pools[s] = rte_pktmbuf_pool_create(name, n, DPK_POOL_CACHE, 0, data_room, SOCKET_ID_ANY);
		snprintf(name, sizeof(name), "iip_clone_s%u", s);
		if (dpk.pools[s]) {
			dpk.clone_pools[s] = rte_pktmbuf_pool_create(name, n, DPK_POOL_CACHE, 0, 0, (int) s);
			if (!dpk.clone_pools[s])
				dpk.clone_pools[s] = rte_pktmbuf_pool_create(name, n, DPK_POOL_CACHE, 0, 0, SOCKET_ID_ANY);
		}
		if (!dpk.pools[s] || !dpk.clone_pools[s]) {
			fprintf(stderr, "%s: dpdk: cannot create a pool of %u mbufs of %u bytes (about %u MB) on socket %u: "
				"%s. Give EAL more memory (-m MB; with --no-huge the default is 64 MB) or use fewer mbufs "
				"(-n, now %u per thread)\n", prog, n, data_room,
				(unsigned) (((uint64_t) n * (data_room + 2 * sizeof(struct rte_mbuf) + 128)) >> 20), s,
				rte_strerror(rte_errno), dpk.conf.mbufs_per_thread);
			return -1;
		}
	}
	for (i = 0; i < dpk.nthreads; i++) {
		dpk.threads[i].pool = dpk.pools[dpk.threads[i].socket];
		dpk.threads[i].clone_pool = dpk.clone_pools[dpk.threads[i].socket];
	}
	return 0;
}

static int dpk_thread_setup(struct dpk_thread *t)
{
	t->opaque[0] = t;
	if (io_stack_create(&t->workspace, &t->conns, dpk.conf.nconn, &t->pbs, dpk.conf.npb)) {
		fprintf(stderr, "dpdk: thread %u: out of memory\n", t->index);
		return -1;
	}
	if (io_stack_random_isn_secret(t->workspace, "dpdk"))
		return -1;
	if (dpk_steer_init(t)) {
		fprintf(stderr, "dpdk: thread %u: cannot create its steering ring or eventfd\n", t->index);
		return -1;
	}
	return 0;
}

static int dpk_setup(const char *prog)
{
	char err[512];
	unsigned lcore;
	uint16_t i, max_mtu = 0;

	dpk.nthreads = (uint16_t) rte_lcore_count();
	if (dpk.nthreads > DPK_MAX_THREADS) {
		fprintf(stderr, "%s: dpdk: %u lcores, at most %d\n", prog, dpk.nthreads, DPK_MAX_THREADS);
		return -1;
	}
	memset(dpk.port_index, 0xff, sizeof(dpk.port_index));
	dpk.nports = dpk.conf.nports;
	for (i = 0; i < dpk.nports; i++) {
		struct dpk_port *p = &dpk.ports[i];
		if (dpk_port_probe(p, dpk.conf.port_ids[i], err, sizeof(err))) {
			fprintf(stderr, "%s: dpdk: -a %u,...: %s\n", prog, dpk.conf.port_ids[i], err);
			return -1;
		}
		p->ip4_be = dpk.conf.port_ip4_be[i];
		dpk.port_index[p->id] = (int16_t) i;
		if (p->mtu > max_mtu)
			max_mtu = p->mtu;
		if (!dpk.mtu || p->mtu < dpk.mtu)
			dpk.mtu = p->mtu;
	}
	/* one buffer holds a whole frame of the largest MTU, aligned (mbuf_ops.h) */
	dpk.buf_room = RTE_MBUF_DEFAULT_DATAROOM;
	if ((uint32_t) max_mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + DPK_ALIGN_PAD > dpk.buf_room)
		dpk.buf_room = (uint32_t) max_mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + DPK_ALIGN_PAD;
	if (dpk.conf.buf_size) {
		if (dpk.conf.buf_size < dpk.buf_room) {
			fprintf(stderr, "%s: dpdk: -s %u is too small for an MTU of %u: at least %u\n", prog,
				dpk.conf.buf_size, max_mtu, dpk.buf_room);
			return -1;
		}
		dpk.buf_room = dpk.conf.buf_size;
	}
	dpk.threads = calloc(dpk.nthreads, sizeof(*dpk.threads));
	if (!dpk.threads)
		return -1;
	i = 0;
	RTE_LCORE_FOREACH(lcore) { /* the main lcore first: thread 0 runs on it */
		struct dpk_thread *t;
		if (lcore != rte_get_main_lcore())
			continue;
		t = &dpk.threads[i++];
		t->lcore = lcore;
	}
	RTE_LCORE_FOREACH_WORKER(lcore)
		dpk.threads[i++].lcore = lcore;
	for (i = 0; i < dpk.nthreads; i++) {
		struct dpk_thread *t = &dpk.threads[i];
		t->index = i;
		t->socket = rte_lcore_to_socket_id(t->lcore);
		if (t->socket >= RTE_MAX_NUMA_NODES)
			t->socket = 0;
		t->efd = t->epfd = -1;
	}
	if (dpk_create_pools(prog))
		return -1;
	for (i = 0; i < dpk.nthreads; i++)
		if (dpk_thread_setup(&dpk.threads[i]))
			return -1;
	for (i = 0; i < dpk.nports; i++)
		if (dpk_port_start(&dpk.ports[i], dpk.nthreads, err, sizeof(err))) {
			fprintf(stderr, "%s: dpdk: %s\n", prog, err);
			return -1;
		}
	dpk_features_combine();
	for (i = 0; i < dpk.nthreads; i++) {
		iip_set_mtu(dpk.threads[i].workspace, dpk.mtu);
		if (dpk_wait_init(&dpk.threads[i])) {
			fprintf(stderr, "%s: dpdk: thread %u: epoll setup failed: %s\n", prog, i, strerror(errno));
			return -1;
		}
	}
	if (dpk.conf.pcap_path) {
		struct timespec wall;
		if (io_pcap_open(&dpk.pcap, dpk.conf.pcap_path, 1)) {
			fprintf(stderr, "%s: dpdk: cannot write %s: %s\n", prog, dpk.conf.pcap_path, strerror(errno));
			return -1;
		}
		clock_gettime(CLOCK_REALTIME, &wall);
		dpk.pcap_epoch_ns = (uint64_t) wall.tv_sec * 1000000000ull + (uint64_t) wall.tv_nsec - io_clock_now_ns();
		dpk.pcap_on = 1;
	}
	return 0;
}

static void dpk_report_start(void)
{
	uint16_t i;
	char lcores[512];
	size_t used = 0;
	for (i = 0; i < dpk.nthreads && used < sizeof(lcores); i++) {
		int n = snprintf(lcores + used, sizeof(lcores) - used, "%s%u", i ? "," : "", dpk.threads[i].lcore);
		if (n < 0)
			break;
		used += (size_t) n;
	}
	for (i = 0; i < dpk.nports; i++)
		dpk_port_report(&dpk.ports[i], dpk.nthreads);
	printf("dpdk: stack uses: ip4 rx checksum %s, tcp rx checksum %s, udp rx checksum %s, lro %s, "
	       "ip4 tx checksum %s, tcp tx checksum %s, udp tx checksum %s, scatter-gather (zero copy) %s, tso %s\n",
	       dpk.feat.rx_ip4 ? "yes" : "no", dpk.feat.rx_tcp ? "yes" : "no", dpk.feat.rx_udp ? "yes" : "no",
	       dpk.feat.lro ? "yes" : "no", dpk.feat.tx_ip4 ? "yes" : "no", dpk.feat.tx_tcp ? "yes" : "no",
	       dpk.feat.tx_udp ? "yes" : "no", dpk.feat.tx_sg ? "yes" : "no", dpk.feat.tx_tso ? "yes" : "no");
	printf("dpdk: %u thread%s on lcores %s, mtu %u, %s, %u mbufs of %u bytes per thread, burst %u, pcap %s\n",
	       dpk.nthreads, dpk.nthreads == 1 ? "" : "s", lcores, dpk.mtu,
	       dpk.conf.poll_ms ? "interrupt mode (-e)" : "busy poll", dpk.conf.mbufs_per_thread, dpk.buf_room,
	       dpk.conf.burst, dpk.conf.pcap_path ? dpk.conf.pcap_path : "off");
	fflush(stdout);
}

static void dpk_print_stats(void)
{
	uint16_t i;
	for (i = 0; i < dpk.nthreads; i++) {
		const struct dpk_thread *t = &dpk.threads[i];
		const struct dpk_stats *s = &t->st;
		printf("dpdk: thread %u (lcore %u): rx %llu frames %llu bytes (ip4 checksum good %llu, l4 checksum good "
		       "%llu, bad %llu, lro %llu, multi-segment %llu); tx %llu frames %llu bytes (ip4 checksum offloaded "
		       "%llu, tcp %llu, udp %llu, tso %llu frames %llu bytes, multi-segment %llu, linearized %llu, "
		       "pseudo-header ok %llu mismatch %llu); tx dropped: bad %llu full %llu stuck %llu prepare %llu "
		       "unsupported %llu; "
		       "steered out %llu in %llu, dropped full %llu no-buffer %llu; iterations %llu sleeps %llu "
		       "interrupt wakeups %llu steering wakeups %llu\n",
		       i, t->lcore, (unsigned long long) s->rx_frames, (unsigned long long) s->rx_bytes,
		       (unsigned long long) s->rx_ip4_good, (unsigned long long) s->rx_l4_good,
		       (unsigned long long) s->rx_csum_bad, (unsigned long long) s->rx_lro,
		       (unsigned long long) s->rx_multiseg, (unsigned long long) s->tx_frames,
		       (unsigned long long) s->tx_bytes, (unsigned long long) s->tx_ip4_csum,
		       (unsigned long long) s->tx_tcp_csum, (unsigned long long) s->tx_udp_csum,
		       (unsigned long long) s->tx_tso, (unsigned long long) s->tx_tso_bytes,
		       (unsigned long long) s->tx_multiseg, (unsigned long long) s->tx_linearized,
		       (unsigned long long) s->tx_phdr_ok, (unsigned long long) s->tx_phdr_mismatch,
		       (unsigned long long) s->tx_drop_bad, (unsigned long long) s->tx_drop_full,
		       (unsigned long long) s->tx_drop_stuck,
		       (unsigned long long) s->tx_prepare_refused, (unsigned long long) s->tx_mark_unsupported,
		       (unsigned long long) s->steer_out, (unsigned long long) s->steer_in,
		       (unsigned long long) s->steer_drop_full, (unsigned long long) s->steer_drop_nobuf,
		       (unsigned long long) s->iterations, (unsigned long long) s->sleeps,
		       (unsigned long long) s->rx_wakeups, (unsigned long long) s->steer_wakeups);
	}
	for (i = 0; i < dpk.nthreads; i++) {
		uint32_t pb_free = 0, pb_total = 0, conn_free = 0, conn_total = 0;
		iip_pool_counts(dpk.threads[i].workspace, &pb_free, &pb_total, &conn_free, &conn_total);
		printf("dpdk: thread %u: stack pools at exit: packet wrappers %u of %u free, connections %u of %u free\n",
		       i, pb_free, pb_total, conn_free, conn_total);
	}
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (dpk.pools[i])
			printf("dpdk: socket %u: mbufs in use at exit: %u of %u (driver receive rings, the stack's queues), "
			       "clones %u of %u\n", i, rte_mempool_in_use_count(dpk.pools[i]), dpk.pools[i]->size,
			       dpk.clone_pools[i] ? rte_mempool_in_use_count(dpk.clone_pools[i]) : 0,
			       dpk.clone_pools[i] ? dpk.clone_pools[i]->size : 0);
	for (i = 0; i < dpk.nports; i++) {
		struct rte_eth_stats es;
		if (!dpk.ports[i].started || rte_eth_stats_get(dpk.ports[i].id, &es) != 0)
			continue;
		printf("dpdk: port %u: device counters: rx %llu packets %llu bytes, missed %llu, errors %llu, "
		       "no mbuf %llu; tx %llu packets %llu bytes, errors %llu\n",
		       dpk.ports[i].id, (unsigned long long) es.ipackets, (unsigned long long) es.ibytes,
		       (unsigned long long) es.imissed, (unsigned long long) es.ierrors,
		       (unsigned long long) es.rx_nombuf, (unsigned long long) es.opackets,
		       (unsigned long long) es.obytes, (unsigned long long) es.oerrors);
	}
	fflush(stdout);
}

static void dpk_teardown(void)
{
	uint16_t i, k;
	for (i = 0; dpk.threads && i < dpk.nthreads; i++) {
		struct dpk_thread *t = &dpk.threads[i];
		for (k = 0; k < dpk.nports; k++) {
			uint16_t j;
			for (j = 0; j < t->nrx[k]; j++)
				rte_pktmbuf_free(t->rx[k][j]);
			t->nrx[k] = 0;
			for (j = 0; j < t->tx[k].n; j++)
				rte_pktmbuf_free(t->tx[k].m[j]);
			t->tx[k].n = 0;
		}
		dpk_wait_destroy(t);
		dpk_steer_destroy(t);
		/* the workspace may still hold mbufs (unacknowledged data): they
		 * go with the pools when EAL cleans up */
		free(t->workspace);
		free(t->conns);
		free(t->pbs);
	}
	for (i = 0; i < dpk.nports; i++)
		if (dpk.ports[i].started) {
			rte_eth_dev_stop(dpk.ports[i].id);
			rte_eth_dev_close(dpk.ports[i].id);
			dpk.ports[i].started = 0;
		}
	free(dpk.threads);
	dpk.threads = NULL;
	if (dpk.eal_up)
		rte_eal_cleanup();
	dpk.eal_up = 0;
}

/* everything of __iosub_main but freeing the argument arrays */
static int dpk_main(int argc, char *const *argv)
{
	char **args;
	int first = -1, second = -1, i, e, rc = 0;
	struct sigaction sa;
	const char *prog = argc > 0 ? argv[0] : "iip-dpdk";

	IO_STACK_CALLS_MAY_GO_UNUSED();
	(void) iip_pool_counts;
	if (argc < 1)
		return 2;
	/* EAL and getopt permute their argv: work on a copy */
	args = dpk.args = calloc((size_t) argc + 1, sizeof(char *));
	if (!args)
		return 1;
	for (i = 0; i < argc; i++) {
		args[i] = argv[i];
		if (!strcmp(argv[i], "--")) {
			if (first < 0)
				first = i;
			else if (second < 0)
				second = i;
		}
	}
	if (first < 0) {
		fprintf(stderr, "%s: dpdk: missing \"--\" after the EAL options\n", prog);
		dpk_usage(stderr, prog);
		return 2;
	}
	{ /* the backend's options: argv[0] + args[first+1 .. second) */
		int n = (second < 0 ? argc : second) - first - 1, k;
		char **mine = calloc((size_t) n + 2, sizeof(char *));
		if (!mine)
			return 1;
		mine[0] = (char *) prog;
		for (k = 0; k < n; k++)
			mine[k + 1] = args[first + 1 + k];
		if (dpk_parse_options(n + 1, mine, &dpk.conf)) {
			dpk_usage(stderr, prog);
			free(mine);
			return 2;
		}
		free(mine); /* conf keeps only pointers into argv (pcap path) */
	}
	if (dpk_prechecks(prog, first, args))
		return 1;
	pthread_mutex_init(&dpk.pcap_lock, NULL);
	e = rte_eal_init(first, args);
	if (e < 0) {
		fprintf(stderr, "%s: dpdk: EAL initialisation failed: %s (see the EAL messages above; without "
			"hugepages add --no-huge -m 1024; a second DPDK process needs its own --file-prefix)\n",
			prog, rte_strerror(rte_errno));
		return 1;
	}
	dpk.eal_up = 1;
	if (dpk_setup(prog)) {
		dpk_teardown();
		return 1;
	}
	dpk_report_start();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dpk_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	{ /* the application's options: argv[0] and everything after the second "--" */
		int app_argc;
		char **app_argv = dpk.app_argv = io_args_app_argv(argc, argv, second < 0 ? argc : second + 1, &app_argc);
		if (!app_argv) {
			dpk_teardown();
			return 1;
		}
		app_argv[0] = (char *) prog;
		io_args_reset_getopt();
		dpk.threads[0].opaque[1] = __app_init(app_argc, app_argv);
		for (i = 1; i < dpk.nthreads; i++)
			dpk.threads[i].opaque[1] = dpk.threads[0].opaque[1];
		/* app_argv stays allocated until after __app_exit: an application
		 * may keep pointers into it */
	}
	for (i = 1; i < dpk.nthreads; i++) {
		e = rte_eal_remote_launch(dpk_thread_main, &dpk.threads[i], dpk.threads[i].lcore);
		if (e) {
			fprintf(stderr, "%s: dpdk: cannot start thread %d on lcore %u: %s\n", prog, i,
				dpk.threads[i].lcore, rte_strerror(-e));
			atomic_store(&dpk.stop, 1);
			rc = 1;
		}
	}
	if (!rc)
		dpk_thread_main(&dpk.threads[0]);
	rte_eal_mp_wait_lcore();
	__app_exit(dpk.threads[0].opaque[1]);
	for (i = 0; i < dpk.nthreads; i++)
		dpk_tx_flush(&dpk.threads[i]); /* what the application sent last */
	dpk_print_stats();
	if (dpk.pcap_on && io_pcap_close(&dpk.pcap)) {
		fprintf(stderr, "%s: dpdk: error writing %s\n", prog, dpk.conf.pcap_path);
		rc = 1;
	}
	dpk_teardown();
	return rc;
}

static int __iosub_main(int argc, char *const *argv)
{
	int rc = dpk_main(argc, argv);
	free(dpk.args);
	free(dpk.app_argv);
	dpk.args = dpk.app_argv = NULL;
	return rc;
}
