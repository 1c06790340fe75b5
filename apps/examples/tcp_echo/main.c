/*
 * apps/examples/tcp_echo — a TCP echo server on the iip stack: every byte a
 * client sends comes back on the same connection, and the server closes its
 * side once the client has closed its own and everything was echoed. It moves
 * data both ways at once, so one `socat` run checks the receive and the send
 * path of a backend (the client compares what came back with what it sent).
 *
 * It also checks the backend's flow affinity: for every accepted connection
 * it asks helper_ip4_get_connection_affinity() which thread receives that
 * flow and counts whether that is the thread that got the SYN. A packet of a
 * connection that reached another thread would find no connection there
 * (reset), so "all accepted connections matched and every transfer
 * completed" means every packet arrived on the thread the function names.
 *
 * Flow control: a received packet is kept (cloned) until all of its bytes
 * are queued for sending back; only then is it reported consumed
 * (iip_tcp_rxbuf_consumed), so a client that does not read its echo
 * throttles itself through our advertised window.
 *
 * Options (after the backend's "--"):
 *   [-p PORT] (default 7) [-n CONNS] stop after CONNS connections closed
 *   [-e SEC] stop after SEC seconds without any connection or data   [-v]
 *
 * Build with any backend:  IOSUB_DIR=../../../io/af_xdp make
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <stdatomic.h>
#include <arpa/inet.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/* the backend's clock */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE

#ifndef IIP_MAIN_C
#define IIP_MAIN_C "../../../stack/main.c"
#endif
#include IIP_MAIN_C

/* provided by the backend, which is included at the end of this file */
static uint16_t helper_ip4_get_connection_affinity(uint16_t protocol, uint32_t local_ip4_be, uint16_t local_port_be,
						   uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque);

#define TE_MAX_THREADS 64
#define TE_QUEUE_SLOTS 2048      /* > IIP_CONF_TCP_RX_BUF_PKTS: the window bounds what is queued */
#define TE_RETRY_US 200          /* the pool or the send queue was full: come back soon */

/* a received packet not yet fully echoed */
struct te_slot {
	void *pkt;                   /* a clone: ours until all bytes are queued */
	uint32_t off, left;          /* next byte (from the start of the packet data) and bytes left */
};

struct te_thread;

struct te_conn {
	void *handle;
	struct te_thread *t;
	struct te_conn *prev, *next; /* the thread's list of connections with bytes to echo */
	int listed;
	struct te_slot q[TE_QUEUE_SLOTS];
	uint32_t head, tail;         /* q[head % N] is the oldest */
	int peer_fin, closed_by_us;
	uint64_t bytes_in, bytes_out;
};

struct te_thread {
	uint16_t index;
	struct te_conn *pending;
	uint64_t accepted, closed, bytes_in, bytes_out, refused_send, queue_overflow;
	uint64_t affinity_match, affinity_mismatch, affinity_unknown;
	uint64_t last_activity_ns;
	int used;
	uint32_t open;
};

struct te_app {
	uint16_t port_be;
	uint32_t stop_after_conns;
	uint64_t idle_stop_ns;
	int verbose;
	atomic_uint closed_total;
	atomic_int stop;
	struct te_thread threads[TE_MAX_THREADS];
};

static struct te_app *te_app_of(void *opaque)
{
	return (struct te_app *) ((void **) opaque)[1];
}

static struct te_thread *te_thread_of(void *opaque)
{
	return (struct te_thread *) ((void **) opaque)[2];
}

static uint64_t te_now(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

static void te_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [backend options] -- [-p PORT] [-n CONNS] [-e SEC] [-v]\n"
			"  -p PORT   port to listen on (default 7)\n"
			"  -n CONNS  stop after CONNS connections have closed\n"
			"  -e SEC    stop after SEC seconds without connections or data\n"
			"  -v        one line per connection\n", prog);
}

static long te_num(const char *s, long min, long max, int *err)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || v < min || v > max)
		*err = 1;
	return v;
}

static void *__app_init(int argc, char *const *argv)
{
	struct te_app *a = calloc(1, sizeof(*a));
	int opt, err = 0;
	if (!a) {
		fprintf(stderr, "tcp_echo: out of memory\n");
		exit(1);
	}
	a->port_be = htons(7);
	while ((opt = getopt(argc, argv, "p:n:e:vh")) != -1) {
		switch (opt) {
		case 'p': a->port_be = htons((uint16_t) te_num(optarg, 1, 65535, &err)); break;
		case 'n': a->stop_after_conns = (uint32_t) te_num(optarg, 1, 100000000, &err); break;
		case 'e': a->idle_stop_ns = (uint64_t) te_num(optarg, 1, 86400, &err) * 1000000000ull; break;
		case 'v': a->verbose = 1; break;
		default: err = 1; break;
		}
	}
	if (err || optind != argc) {
		te_usage(argv[0]);
		exit(2);
	}
	return a;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct te_app *a = te_app_of(opaque);
	struct te_thread *t;
	(void) workspace;
	if (core_id >= TE_MAX_THREADS) {
		fprintf(stderr, "tcp_echo: thread %u: at most %d threads\n", core_id, TE_MAX_THREADS);
		exit(1);
	}
	t = &a->threads[core_id];
	t->index = core_id;
	t->used = 1;
	t->last_activity_ns = te_now(opaque);
	return t;
}

static void te_list_add(struct te_thread *t, struct te_conn *c)
{
	if (c->listed)
		return;
	c->listed = 1;
	c->prev = NULL;
	c->next = t->pending;
	if (t->pending)
		t->pending->prev = c;
	t->pending = c;
}

static void te_list_del(struct te_thread *t, struct te_conn *c)
{
	if (!c->listed)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		t->pending = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->listed = 0;
}

/* copies len bytes from byte off of a packet chain into dst */
static void te_copy(void *pkt, uint32_t off, uint8_t *dst, uint32_t len, void *opaque)
{
	void *s;
	uint32_t pos = 0;
	for (s = pkt; s && pos < len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque), k;
		if (off >= n) {
			off -= n;
			continue;
		}
		k = n - off < len - pos ? n - off : len - pos;
		memcpy(dst + pos, d + off, k);
		pos += k;
		off = 0;
	}
}

/*
 * Queues as much of the connection's received bytes as the stack takes.
 * Returns 1 if it stopped because the pool or the send queue refused.
 */
static int te_pump(void *ws, struct te_conn *c, void *opaque)
{
	struct te_thread *t = c->t;
	struct iip_tcp_info info;
	uint32_t chunk;
	iip_tcp_get_info(ws, c->handle, &info);
	chunk = info.snd_mss ? info.snd_mss : 536;
	while (c->head != c->tail) {
		struct te_slot *s = &c->q[c->head % TE_QUEUE_SLOTS];
		uint32_t n = s->left < chunk ? s->left : chunk;
		void *out;
		if (n) {
			out = iip_ops_pkt_alloc(opaque);
			if (!out)
				return 1;
			te_copy(s->pkt, s->off, iip_ops_pkt_get_data(out, opaque), n, opaque);
			iip_ops_pkt_set_len(out, (uint16_t) n, opaque);
			if (iip_tcp_send(ws, c->handle, out, 0, opaque)) {
				iip_ops_pkt_free(out, opaque);
				t->refused_send++;
				return 1;
			}
			s->off += n;
			s->left -= n;
			c->bytes_out += n;
			t->bytes_out += n;
		}
		if (!s->left) { /* every byte of this packet is on its way back */
			iip_ops_pkt_free(s->pkt, opaque);
			s->pkt = NULL;
			c->head++;
			iip_tcp_rxbuf_consumed(ws, c->handle, 1, opaque);
		}
	}
	if (c->peer_fin && !c->closed_by_us) {
		c->closed_by_us = 1;
		iip_tcp_close(ws, c->handle, opaque);
	}
	return 0;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct te_app *a = te_app_of(opaque);
	struct te_thread *t = te_thread_of(opaque);
	struct te_conn *c = t->pending, *next;
	int retry = 0;
	(void) mac; (void) ip4_be;
	for (; c; c = next) {
		next = c->next;
		if (te_pump(workspace, c, opaque))
			retry = 1;
		else
			te_list_del(t, c);
	}
	if (retry && *next_us > TE_RETRY_US)
		*next_us = TE_RETRY_US;
	if (a->idle_stop_ns && !t->open && te_now(opaque) - t->last_activity_ns >= a->idle_stop_ns)
		atomic_store(&a->stop, 1);
	if (a->stop_after_conns && atomic_load(&a->closed_total) >= a->stop_after_conns)
		atomic_store(&a->stop, 1);
}

static uint8_t __app_should_stop(void *opaque)
{
	return atomic_load(&te_app_of(opaque)->stop) ? 1 : 0;
}

static void __app_exit(void *app_global)
{
	struct te_app *a = app_global;
	uint64_t acc = 0, cl = 0, in = 0, out = 0, match = 0, mis = 0, unk = 0;
	uint16_t i, n = 0;
	for (i = 0; i < TE_MAX_THREADS; i++) {
		struct te_thread *t = &a->threads[i];
		if (!t->used)
			continue;
		n++;
		printf("tcp_echo: thread %u: accepted %llu closed %llu, bytes in %llu out %llu, affinity match %llu "
		       "mismatch %llu unknown %llu, send refused %llu, queue overflow %llu\n",
		       i, (unsigned long long) t->accepted, (unsigned long long) t->closed,
		       (unsigned long long) t->bytes_in, (unsigned long long) t->bytes_out,
		       (unsigned long long) t->affinity_match, (unsigned long long) t->affinity_mismatch,
		       (unsigned long long) t->affinity_unknown, (unsigned long long) t->refused_send,
		       (unsigned long long) t->queue_overflow);
		acc += t->accepted;
		cl += t->closed;
		in += t->bytes_in;
		out += t->bytes_out;
		match += t->affinity_match;
		mis += t->affinity_mismatch;
		unk += t->affinity_unknown;
	}
	printf("tcp_echo: total: %u threads, accepted %llu closed %llu, bytes in %llu out %llu, "
	       "affinity match %llu mismatch %llu unknown %llu\n",
	       n, (unsigned long long) acc, (unsigned long long) cl, (unsigned long long) in,
	       (unsigned long long) out, (unsigned long long) match, (unsigned long long) mis, (unsigned long long) unk);
	fflush(stdout);
	free(a);
}

/* ---- events from the stack ------------------------------------------------------ */

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	(void) context;
	return PB_TCP(pkt)->dst_be == te_app_of(opaque)->port_be;
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct te_app *a = te_app_of(opaque);
	struct te_thread *t = te_thread_of(opaque);
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	struct iip_tcp_hdr *tcp = PB_TCP(pkt);
	struct te_conn *c = calloc(1, sizeof(*c));
	uint16_t want;
	(void) context;
	want = helper_ip4_get_connection_affinity(6, ip->dst_be, tcp->dst_be, ip->src_be, tcp->src_be, opaque);
	if (want == UINT16_MAX)
		t->affinity_unknown++;
	else if (want == t->index)
		t->affinity_match++;
	else
		t->affinity_mismatch++;
	t->accepted++;
	t->open++;
	t->last_activity_ns = te_now(opaque);
	if (a->verbose) {
		char peer[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &ip->src_be, peer, sizeof(peer));
		printf("tcp_echo: thread %u: accepted %s:%u (affinity says thread %u)\n", t->index, peer,
		       ntohs(tcp->src_be), want);
	}
	if (!c) { /* no state: the connection gets no echo and is closed */
		iip_tcp_close(context, handle, opaque);
		return NULL;
	}
	c->handle = handle;
	c->t = t;
	return c;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) opaque;
	return NULL; /* we never connect */
}

static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct te_conn *c = tcp_opaque;
	struct te_thread *t = te_thread_of(opaque);
	uint32_t off, len;
	struct te_slot *s;
	(void) handle;
	t->last_activity_ns = te_now(opaque);
	if (!c) {
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
		return;
	}
	off = (uint32_t) ((uint8_t *) PB_TCP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + head_off;
	len = PB_TCP_PAYLOAD_LEN(pkt) - head_off - tail_off;
	if (PB_TCP_HDR_HAS_FIN(pkt))
		c->peer_fin = 1;
	if (c->tail - c->head == TE_QUEUE_SLOTS) { /* cannot happen while the window bounds us */
		t->queue_overflow++;
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
		return;
	}
	s = &c->q[c->tail % TE_QUEUE_SLOTS];
	s->pkt = len ? iip_ops_pkt_clone(pkt, opaque) : NULL;
	if (len && !s->pkt) { /* no descriptor: the bytes are lost, the transfer will show it */
		t->queue_overflow++;
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
		return;
	}
	s->off = off;
	s->left = len;
	c->tail++;
	c->bytes_in += len;
	t->bytes_in += len;
	/* echo now, inside iip_run, so that it leaves with this batch */
	if (te_pump(context, c, opaque))
		te_list_add(t, c);
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) tcp_opaque; (void) opaque;
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct te_conn *c = tcp_opaque;
	struct te_app *a = te_app_of(opaque);
	struct te_thread *t = te_thread_of(opaque);
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac;
	(void) peer_ip4_be; (void) peer_port_be;
	if (!c)
		return;
	te_list_del(t, c);
	while (c->head != c->tail) {
		struct te_slot *s = &c->q[c->head++ % TE_QUEUE_SLOTS];
		if (s->pkt)
			iip_ops_pkt_free(s->pkt, opaque);
	}
	if (a->verbose)
		printf("tcp_echo: thread %u: closed, %llu bytes in, %llu out\n", t->index,
		       (unsigned long long) c->bytes_in, (unsigned long long) c->bytes_out);
	t->closed++;
	if (t->open)
		t->open--;
	t->last_activity_ns = te_now(opaque);
	atomic_fetch_add(&a->closed_total, 1);
	free(c);
}

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

/* the backend: its callbacks and __iosub_main */
#include IOSUB_MAIN_C

int main(int argc, char *const *argv)
{
	return __iosub_main(argc, argv);
}
