/*
 * apps/bench — the benchmark tool on the iip stack (seed 003's bench-iip,
 * written anew): a TCP/UDP ping-pong and burst client and server with the
 * options, per-second lines and latency summary of the Linux baseline
 * (apps/linux_baseline), so the two are driven and plotted alike.
 *
 *   IOSUB_DIR=<backend folder> make          e.g. IOSUB_DIR=io/loop make
 *   ./a.out [backend options] -- [bench options]       (opts.h lists them)
 *
 * On the loop backend, a server and a client in one process:
 *   ./a.out -V -T 5 -- -p 10000 -g 1 -l 1 -- -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 32 -t 3
 *
 * Structure: opts.h (command line, messages), bench.h (state, counters,
 * payload walk, TCP sender), client.h, server.h, and here the application
 * contract of COMPAT.md section 3 and the stack's event callbacks.
 *
 * Threads: the backend calls __app_thread_init once per networking thread;
 * each thread only touches its own state and its own cache line of
 * counters.  The first registered thread of the app prints the per-second
 * lines from its __app_loop, reading the others' counters with relaxed
 * atomic loads (stats.h).  With the loop backend every host is its own app
 * (its own __app_init) with one thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the stack is freestanding: give it libc's memory functions and printf */
#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/* the backend's clock (virtual with the loop's -V) */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE

#ifndef IIP_MAIN_C
#define IIP_MAIN_C "../../stack/main.c"
#endif
#include IIP_MAIN_C

#include "bench.h"
#include "client.h"
#include "server.h"

/* ---- the application contract (COMPAT.md section 3) ------------------------------ */

static void bench_on_signal(int sig)
{
	(void) sig;
	bench_signalled = 1;
}

/* a backend that handles SIGINT itself keeps its handler */
static void bench_install_signal(int sig)
{
	struct sigaction old, sa;
	if (sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bench_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void *__app_init(int argc, char *const *argv)
{
	struct bench_global *g = calloc(1, sizeof(*g));
	char ip[INET_ADDRSTRLEN];
	if (!g) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	if (bench_parse(argc, argv, &g->o))
		exit(2);
	bench_install_signal(SIGINT);
	bench_install_signal(SIGTERM);
	if (g->o.client) {
		inet_ntop(AF_INET, &g->o.server_ip4_be, ip, sizeof(ip));
		printf("bench: client: %s:%u %s, %s, %u connection(s) per thread, depth %u, %u-byte requests, "
		       "%u-byte replies, rate %llu/s per thread, %llu s\n",
		       ip, ntohs(g->o.port_be), g->o.proto == 6 ? "TCP" : "UDP",
		       g->o.mode == BENCH_PINGPONG ? "ping-pong" : "burst", g->o.conns, g->o.depth, g->o.msg.len,
		       g->o.expect.len, (unsigned long long) g->o.rate, (unsigned long long) g->o.duration_s);
	} else {
		printf("bench: server: %s port %u, %s, %u-byte replies, remote stop port %u\n",
		       g->o.proto == 6 ? "TCP" : "UDP", ntohs(g->o.port_be),
		       g->o.mode == BENCH_PINGPONG ? "ping-pong" : "burst", g->o.msg.len, ntohs(g->o.stop_port_be));
	}
	fflush(stdout);
	return g;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct bench_global *g = bench_g(opaque);
	struct bench_thread *t = calloc(1, sizeof(*t));
	uint32_t i;
	if (!t) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	t->g = g;
	t->core_id = core_id;
	t->workspace = workspace;
	t->index = atomic_fetch_add(&g->nthreads, 1);
	if (t->index >= BENCH_MAX_THREADS) {
		fprintf(stderr, "bench: more than %d threads\n", BENCH_MAX_THREADS);
		exit(1);
	}
	t->ctr = &g->counters[t->index];
	t->hist = calloc(1, sizeof(*t->hist));
	if (!t->hist)
		goto oom;
	if (g->o.client) {
		t->conns = calloc(g->o.conns, sizeof(*t->conns));
		t->port_conn = calloc(65536, sizeof(*t->port_conn));
		if (!t->conns || !t->port_conn)
			goto oom;
		for (i = 0; i < g->o.conns; i++) {
			t->conns[i].t = t;
			if (g->o.mode == BENCH_PINGPONG && !(t->conns[i].sent_ns = calloc(g->o.depth, sizeof(uint64_t))))
				goto oom;
		}
		t->stop_conn.t = t;
	} else if (g->o.proto == 17) {
		/* from now on datagrams to closed ports get ICMP port unreachable */
		iip_udp_port_open(workspace, g->o.port_be, 1);
	}
	atomic_store_explicit(&g->threads[t->index], t, memory_order_release);
	return t;
oom:
	fprintf(stderr, "bench: out of memory for %u connections of depth %u\n", g->o.conns, g->o.depth);
	exit(1);
}

static void bench_print_interval(struct bench_global *g, uint64_t now)
{
	uint32_t n = atomic_load_explicit(&g->nthreads, memory_order_acquire);
	if (!g->last_print_ns) {
		g->last_print_ns = now;
		g->next_print_ns = now + 1000000000ull;
		return;
	}
	if (now < g->next_print_ns)
		return;
	bl_report_interval(g->counters, g->prev, n, now - g->last_print_ns);
	g->last_print_ns = now;
	g->next_print_ns += 1000000000ull;
	if (g->next_print_ns <= now)
		g->next_print_ns = now + 1000000000ull;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	struct bench_global *g = t->g;
	uint64_t now = bench_now(opaque), zero = 0;
	t->workspace = workspace;
	memcpy(t->mac, mac, 6);
	t->ip4_be = ip4_be;
	if (!atomic_load_explicit(&g->start_ns, memory_order_relaxed))
		atomic_compare_exchange_strong(&g->start_ns, &zero, now);
	if (g->o.client)
		bench_client_loop(t, now, next_us, opaque);
	else
		bench_server_loop(t, now, next_us, opaque);
	if (t->index == 0) {
		/* the summary's clock when the backend stops us before the end (-T) */
		atomic_store_explicit(&g->last_now_ns, now, memory_order_relaxed);
		if (g->o.verbose >= 1) {
			bench_print_interval(g, now);
			bench_wake_at(next_us, now, g->next_print_ns);
		}
	}
}

static uint8_t __app_should_stop(void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	if (t->g->o.client)
		return t->phase == BENCH_P_DONE;
	if (!t->stop_seen)
		return 0;
	return !t->nlive || bench_now(opaque) - t->phase_ns >= BENCH_GRACE_NS;
}

static void __app_exit(void *app_global)
{
	struct bench_global *g = app_global;
	const struct bench_opts *o = &g->o;
	uint32_t n = atomic_load(&g->nthreads), i;
	uint64_t start = atomic_load(&g->start_ns), end = atomic_load(&g->end_ns);
	uint64_t requests = 0, bad = 0, unexpected = 0, lost = 0, checked = 0, bad_bytes = 0, refused = 0;
	uint64_t connected = 0, failed = 0, accepted = 0, answered = 0, tx_bytes = 0, rx_bytes = 0;
	struct bl_hist *all = calloc(1, sizeof(*all));
	double seconds;
	if (!end)
		end = atomic_load(&g->last_now_ns);
	seconds = end > start ? (double) (end - start) / 1e9 : 0;
	for (i = 0; i < n; i++) {
		struct bench_thread *t = atomic_load(&g->threads[i]);
		if (!t)
			continue;
		requests += t->requests;
		bad += t->bad_replies;
		unexpected += t->unexpected_bytes;
		lost += t->lost;
		checked += t->checked_bytes;
		bad_bytes += t->bad_bytes;
		refused += t->tx_refused;
		connected += t->connected;
		failed += t->failed;
		accepted += t->accepted;
		answered += t->answered;
		tx_bytes += atomic_load(&g->counters[i].tx_bytes);
		rx_bytes += atomic_load(&g->counters[i].rx_bytes);
		if (all)
			bl_hist_merge(all, t->hist);
	}
	if (o->client) {
		printf("bench: client: %llu connection(s) established, %llu failed; %llu requests, %llu replies checked "
		       "bad %llu, unexpected reply bytes %llu, lost %llu, sends refused %llu\n",
		       (unsigned long long) connected, (unsigned long long) failed, (unsigned long long) requests,
		       (unsigned long long) (o->check ? requests : 0), (unsigned long long) bad,
		       (unsigned long long) unexpected, (unsigned long long) lost, (unsigned long long) refused);
		if (all && all->count)
			printf("latency (us): p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f (%lu samples)\n",
			       bl_hist_percentile(all, 50) / 1e3, bl_hist_percentile(all, 90) / 1e3,
			       bl_hist_percentile(all, 99) / 1e3, bl_hist_percentile(all, 99.9) / 1e3,
			       (unsigned long) all->count);
		else
			printf("latency (us): no samples (0 samples)\n");
		if (o->mode == BENCH_PINGPONG)
			printf("total: %llu requests in %.3f s, %.0f requests/s\n", (unsigned long long) requests, seconds,
			       seconds > 0 ? (double) requests / seconds : 0);
		else
			printf("total: %llu bytes sent in %.3f s, %.1f Mbps\n", (unsigned long long) tx_bytes, seconds,
			       seconds > 0 ? (double) tx_bytes * 8 / 1e6 / seconds : 0);
	} else {
		printf("bench: server: %llu connection(s) accepted, %llu requests answered, rx %llu bytes, tx %llu bytes, "
		       "checked %llu bytes bad %llu, sends refused %llu, remote stop %s\n",
		       (unsigned long long) accepted, (unsigned long long) answered, (unsigned long long) rx_bytes,
		       (unsigned long long) tx_bytes, (unsigned long long) checked, (unsigned long long) bad_bytes,
		       (unsigned long long) refused, atomic_load(&g->stop_requested) ? "yes" : "no");
	}
	if (atomic_load(&g->fatal))
		printf("bench: error: the run did not complete (see above)\n");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		struct bench_thread *t = atomic_load(&g->threads[i]);
		struct bench_conn *c;
		uint32_t k;
		if (!t)
			continue;
		if (t->conns)
			for (k = 0; k < o->conns; k++)
				free(t->conns[k].sent_ns);
		while ((c = t->live)) {
			t->live = c->next;
			free(c);
		}
		while ((c = t->free_conns)) {
			t->free_conns = c->next;
			free(c);
		}
		free(t->conns);
		free(t->port_conn);
		free(t->hist);
		free(t);
	}
	free(all);
	free(o->msg.bytes);
	free(o->expect.bytes);
	free(g);
}

/* ---- events from the stack --------------------------------------------------------- */

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	struct bench_global *g = bench_g(opaque);
	uint32_t sender;
	(void) context;
	if (!g->o.client || atomic_load_explicit(&g->server_mac_known, memory_order_acquire))
		return;
	memcpy(&sender, PB_ARP_IP_SENDER(pkt), 4);
	if (sender != g->o.server_ip4_be)
		return;
	/* any thread may get the reply (queue 0 on most NICs): share it */
	memcpy(g->server_mac, PB_ARP_HW_SENDER(pkt), 6);
	atomic_store_explicit(&g->server_mac_known, 1, memory_order_release);
	if (g->o.verbose >= 2)
		printf("bench: server MAC %02x:%02x:%02x:%02x:%02x:%02x\n", g->server_mac[0], g->server_mac[1],
		       g->server_mac[2], g->server_mac[3], g->server_mac[4], g->server_mac[5]);
}

static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

/* server: the benchmark port (TCP mode) and the remote-stop port */
static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	const struct bench_opts *o = &bench_g(opaque)->o;
	uint16_t port_be = PB_TCP(pkt)->dst_be;
	(void) context;
	if (o->client)
		return 0;
	return (o->proto == 6 && port_be == o->port_be) || (o->stop_port_be && port_be == o->stop_port_be);
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	struct bench_conn *c = bench_server_conn_new(t);
	if (!c)
		return NULL; /* no state: its events are ignored, the client's close ends it */
	c->handle = handle;
	c->state = BENCH_C_OPEN;
	c->mss = bench_conn_mss(context, handle);
	c->is_stop = PB_TCP(pkt)->dst_be == t->g->o.stop_port_be && t->g->o.stop_port_be != t->g->o.port_be;
	iip_tcp_set_nodelay(context, handle, 1);
	t->accepted += !c->is_stop;
	if (c->is_stop) {
		bench_server_stop_requested(t->g, "remote stop requested");
		bench_todo_push(c); /* closed from __app_loop */
	} else if (t->g->o.verbose >= 2) {
		printf("bench: [%u] accepted a connection from port %u\n", t->index, ntohs(PB_TCP(pkt)->src_be));
	}
	return c;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	struct bench_conn *c = NULL;
	uint32_t idx = t->port_conn ? t->port_conn[ntohs(PB_TCP(pkt)->dst_be)] : 0;
	if (t->stop_conn.state == BENCH_C_CONNECTING && PB_TCP(pkt)->dst_be == t->stop_conn.local_port_be)
		c = &t->stop_conn;
	else if (idx)
		c = &t->conns[idx - 1];
	if (!c || c->state != BENCH_C_CONNECTING)
		return NULL;
	c->handle = handle;
	c->state = BENCH_C_OPEN;
	c->mss = bench_conn_mss(context, handle);
	iip_tcp_set_nodelay(context, handle, 1);
	if (!c->is_stop)
		t->connected++;
	/* first requests (or the close) from __app_loop: the stack records
	 * our opaque for this connection only when we return */
	bench_todo_push(c);
	return c;
}

static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct bench_conn *c = tcp_opaque;
	uint32_t total = PB_TCP_PAYLOAD_LEN(pkt), len = total > (uint32_t) head_off + tail_off ? total - head_off - tail_off : 0;
	if (c && len && !c->is_stop) {
		bl_count(&c->t->ctr->rx_bytes, len);
		bl_count(&c->t->ctr->rx_ops, 1);
		if (c->t->g->o.client)
			bench_client_tcp_rx(c, pkt, head_off, len, opaque);
		else
			bench_server_tcp_rx(c, pkt, head_off, len, opaque);
	}
	/* one packet consumed: keeps the advertised window open */
	iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
	if (c && PB_TCP_HDR_HAS_FIN(pkt)) {
		c->peer_fin = 1; /* close our side too, from __app_loop */
		bench_todo_push(c);
	}
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct bench_conn *c = tcp_opaque;
	uint32_t len = iip_ops_pkt_get_len(pkt, opaque);
	(void) context; (void) handle;
	if (!c)
		return;
	c->unacked = c->unacked > len ? c->unacked - len : 0;
	if (c->t->g->o.mode == BENCH_BURST && c->t->g->o.client)
		bench_tcp_pump(c, opaque); /* burst: refill as data is acknowledged */
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	struct bench_conn *c = tcp_opaque;
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) peer_mac; (void) peer_ip4_be;
	if (!c && t->g->o.client) {
		/* a connection that never opened: find it by its local port */
		uint32_t idx = t->port_conn[ntohs(local_port_be)];
		if (t->stop_conn.state == BENCH_C_CONNECTING && local_port_be == t->stop_conn.local_port_be &&
		    peer_port_be == t->g->o.stop_port_be)
			c = &t->stop_conn;
		else if (idx)
			c = &t->conns[idx - 1];
		if (c && c->state == BENCH_C_CONNECTING) {
			c->state = BENCH_C_FAILED;
			if (!c->is_stop) {
				t->failed++;
				fprintf(stderr, "bench: [%u] connection from port %u failed\n", t->index, ntohs(local_port_be));
			}
		}
		return;
	}
	if (!c)
		return;
	c->state = BENCH_C_CLOSED;
	c->handle = NULL;
	if (t->g->o.client) {
		if (!c->is_stop)
			t->closed++;
	} else {
		bench_todo_push(c); /* freed from __app_loop, where no list holds it */
	}
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	struct bench_thread *t = bench_t(opaque);
	(void) context;
	if (t->g->o.client) {
		if (t->g->o.proto == 17)
			bench_client_udp_rx(t, pkt, opaque);
	} else {
		bench_server_udp_rx(t, pkt, opaque);
	}
}

/* the backend: its callbacks and __iosub_main */
#include IOSUB_MAIN_C

int main(int argc, char *const *argv)
{
	return __iosub_main(argc, argv);
}
